#!/usr/bin/env bash
# hack/kind/base-rootfs.sh OUT KIND_DIR: the root file system of kind's base image, assembled from
# Debian packages instead of kind's Docker build (images/base/Dockerfile in KIND_DIR, the kind
# module of go.mod), for machines that reach Debian's mirror but no container registry. It holds
# what kind's base image holds: systemd as init, containerd, runc and the CNI plugins (Debian
# trixie, with containerd/runc/CNI plugins from sid for versions close to kind's), iptables and
# nftables, conntrack, mount tools, and kind's own files (entrypoint, systemd units, containerd
# configuration, kubelet drop-ins) copied from KIND_DIR, then set up as the Dockerfile does. No
# crictl: Debian does not package it (ctr is there).
set -o errexit -o nounset -o pipefail
out=$1 kind=$2/images/base
mirror=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources)
packages=systemd,dbus,conntrack,iptables,nftables,iproute2,ethtool,util-linux,mount,kmod,libseccomp2,pigz,fuse-overlayfs,e2fsprogs,bash,ca-certificates,curl,jq,procps
# shellcheck disable=SC2016 # $1 is mmdebstrap's, in the hooks
nice -n 10 mmdebstrap --quiet --variant=minbase --include="${packages}" \
  --customize-hook="echo 'deb ${mirror} sid main' >\"\$1/etc/apt/sources.list.d/sid.list\"" \
  --customize-hook='chroot "$1" apt-get -o Acquire::Check-Valid-Until=false update -q' \
  --customize-hook='chroot "$1" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends -t sid containerd runc containernetworking-plugins' \
  --customize-hook='rm "$1/etc/apt/sources.list.d/sid.list"; chroot "$1" apt-get clean; rm -rf "$1"/var/lib/apt/lists/*' \
  --customize-hook="cp -r ${kind}/files/kind \"\$1/\"; cp ${kind}/files/usr/local/bin/* \"\$1/usr/local/bin/\"; mkdir -p \"\$1/LICENSES\" \"\$1/etc/kubernetes/manifests\"" \
  --customize-hook="cp ${kind}/files/etc/crictl.yaml \"\$1/etc/\"; for d in containerd default sysctl.d systemd/system systemd/system/kubelet.service.d; do mkdir -p \"\$1/etc/\$d\"; find ${kind}/files/etc/\$d -maxdepth 1 -type f -exec cp {} \"\$1/etc/\$d/\" \\;; done" \
  --customize-hook='chmod 0755 "$1"/usr/local/bin/* "$1/kind" "$1/kind/bin" "$1"/kind/bin/*' \
  --customize-hook='cd "$1"; rm -f lib/systemd/system/sysinit.target.wants/systemd-tmpfiles-setup.service lib/systemd/system/multi-user.target.wants/* etc/systemd/system/*.wants/* lib/systemd/system/local-fs.target.wants/* lib/systemd/system/sockets.target.wants/*udev* lib/systemd/system/sockets.target.wants/*initctl* lib/systemd/system/basic.target.wants/*; echo ReadKMsg=no >>etc/systemd/journald.conf; ln -sf /usr/lib/systemd/systemd sbin/init' \
  --customize-hook='chroot "$1" systemctl enable kubelet.service containerd.service undo-mount-hacks.service; chroot "$1" systemctl mask systemd-binfmt.service' \
  --customize-hook='for b in containerd ctr containerd-shim-runc-v2; do ln -sf /usr/bin/$b "$1/usr/local/bin/$b"; done; mkdir -p "$1/opt/cni/bin"; for p in host-local loopback ptp portmap bridge; do ln -sf /usr/lib/cni/$p "$1/opt/cni/bin/$p"; done' \
  --customize-hook='chroot "$1" sh -c "ctr oci spec | jq \".hooks.createContainer[.hooks.createContainer | length] |= . + {\\\"path\\\": \\\"/kind/bin/mount-product-files.sh\\\"} | del(.process.rlimits)\" >/etc/containerd/cri-base.json"' \
  trixie "${out}" "deb ${mirror} trixie main"
