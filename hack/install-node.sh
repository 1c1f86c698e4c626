#!/usr/bin/env bash
# Install what the real node of 'make up NODES=real' runs on, from Debian's packages: containerd,
# runc, the CNI plugins, iptables (the kubelet uses it) and a static busybox (the base of the
# locally built images, hack/node-images.sh). Packages already installed are not touched.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

command -v dpkg-query >/dev/null || die "the real node is installed from Debian packages; this is not a Debian system"
wanted=(containerd runc containernetworking-plugins iptables busybox-static openssl)
missing=()
for pkg in "${wanted[@]}"; do
  [[ $(dpkg-query -W -f '${db:Status-Status}' "${pkg}" 2>/dev/null) == installed ]] || missing+=("${pkg}")
done
if ((${#missing[@]})); then
  [[ ${EUID} -eq 0 ]] || die "a real node needs these Debian packages: ${missing[*]}. Install them as root (apt-get install ${missing[*]}), or run 'sudo make up NODES=real'"
  log "installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
log "node packages: containerd $(containerd --version | awk '{print $3}'), runc $(runc --version | awk 'NR==1{print $3}')"
