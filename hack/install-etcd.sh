#!/usr/bin/env bash
# Build etcd at the version that upstream pins (hack/lib/etcd.sh: ETCD_VERSION) from the Go module
# proxy, using the version pinned in this repository's go.mod, and install it where upstream's
# integration framework looks for it: third_party/etcd/etcd in the tree (hack/lib/etcd.sh puts that
# directory on PATH) and _output/bin/etcd (our scripts put that on PATH).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

# shellcheck disable=SC2016 # a literal ${ETCD_VERSION:-...} in upstream's script
want=$(sed -n 's/^ETCD_VERSION=\${ETCD_VERSION:-\(.*\)}$/\1/p' "${KUBE_TREE}/hack/lib/etcd.sh")
pinned=$(cd "${FORK_ROOT}" && go list -m -f '{{.Version}}' go.etcd.io/etcd/server/v3)
[[ v${want} == "${pinned}" ]] ||
  die "upstream ${KUBE_VERSION} wants etcd ${want} but go.mod pins go.etcd.io/etcd/server/v3 ${pinned}: update go.mod"
if [[ -x ${FORK_BIN}/etcd ]] && "${FORK_BIN}/etcd" --version 2>/dev/null | grep -q "etcd Version: ${want}$"; then
  :
else
  log "building etcd ${want} from the module proxy"
  mkdir -p "${FORK_BIN}"
  (cd "${FORK_ROOT}" && go_quiet go build -o "${FORK_BIN}/etcd" go.etcd.io/etcd/server/v3)
fi
mkdir -p "${KUBE_TREE}/third_party/etcd"
ln -sf "${FORK_BIN}/etcd" "${KUBE_TREE}/third_party/etcd/etcd"
