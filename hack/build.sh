#!/usr/bin/env bash
# Build the patched release binaries into _output/bin, with the version stamped as upstream's
# hack/lib/version.sh does: `kube-apiserver --version` says v1.37.1 plus this patch set.
#
#   hack/build.sh                      # kube-apiserver kube-controller-manager kube-scheduler kubectl
#   hack/build.sh kube-apiserver       # just some of them
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

[[ -d ${KUBE_TREE}/.git ]] || die "no tree at ${KUBE_TREE}: run make tree first"
cmds=("$@")
((${#cmds[@]})) || cmds=(kube-apiserver kube-controller-manager kube-scheduler kubectl)

state=clean
[[ -z $(git -C "${KUBE_TREE}" status --porcelain --untracked-files=no) ]] || state=dirty
version=$(fork_version)
[[ ${state} == clean ]] || version="${version}-dirty"
commit=$(git -C "${KUBE_TREE}" rev-parse HEAD)
date=$(git -C "${KUBE_TREE}" log -1 --format=%cd --date=format:%Y-%m-%dT%H:%M:%SZ)
ldflags=$(version_ldflags "${version}" "gitCommit=${commit}" "gitTreeState=${state}" "buildDate=${date}")
# Built with the same settings as 'go test' (cgo as the toolchain defaults it) so that builds and
# tests share one build cache: on two cores that halves a cold 'make build test'. Upstream's release
# builds are static (CGO_ENABLED=0); the kind image (make kind-image) uses upstream's build.
mkdir -p "${FORK_BIN}"
for c in "${cmds[@]}"; do
  log "building ${c} ${version}"
  (cd "${KUBE_TREE}" && go_quiet go build -ldflags "${ldflags}" -o "${FORK_BIN}/${c}" "./cmd/${c}")
done
echo "${version}" >"${FORK_BIN}/VERSION"
