# Shared settings for the fork's scripts. Source it; do not run it.
# shellcheck shell=bash

FORK_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# The upstream release the series applies to. Staging modules are published as v0.<minor>.<patch>.
KUBE_VERSION=${KUBE_VERSION:-v1.37.1}
STAGING_VERSION=${STAGING_VERSION:-v0.${KUBE_VERSION#v1.}}
FORK_OUTPUT=${FORK_ROOT}/_output
KUBE_TREE=${KUBE_TREE:-${FORK_OUTPUT}/kubernetes}
FORK_BIN=${FORK_OUTPUT}/bin
PATCHES_DIR=${FORK_ROOT}/patches
# The base commit of the materialized tree is tagged so every script can find it.
BASE_TAG=upstream/${KUBE_VERSION}
# The local cluster of 'make up': kwokctl keeps its state in LOCAL_DIR/kwok (KWOK_WORKDIR).
LOCAL_DIR=${FORK_OUTPUT}/local
LOCAL_CLUSTER=${CLUSTER:-configsnapshot}
LOCAL_KUBECONFIG=${LOCAL_DIR}/kubeconfig

export GOFLAGS=${GOFLAGS:--buildvcs=false}
export GOTOOLCHAIN=${GOTOOLCHAIN:-local}

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# Deterministic identity and dates for commits the scripts make, so the base commit
# (and therefore the exported series) does not depend on who materialized the tree.
fork_git() {
  GIT_AUTHOR_NAME="Kubernetes Release" GIT_AUTHOR_EMAIL="release@kubernetes.io" \
  GIT_COMMITTER_NAME="Kubernetes Release" GIT_COMMITTER_EMAIL="release@kubernetes.io" \
  GIT_AUTHOR_DATE="2000-01-01T00:00:00Z" GIT_COMMITTER_DATE="2000-01-01T00:00:00Z" \
    git -C "${KUBE_TREE}" "$@"
}

# format-patch flags chosen so the exported series does not change with the git version or
# the size of the repository: no signature (git version), full blob ids (no abbreviation that
# grows with the repo), zeroed "From <sha>" lines (commit ids change on every git am).
FORMAT_PATCH_FLAGS=(--zero-commit --no-signature --full-index --binary --no-renames
  --stat=100 --stat-graph-width=20 --diff-algorithm=myers --no-numbered)

# export_series DIR: write the commits on top of the base as patch files into DIR.
export_series() {
  local out=$1
  git -C "${KUBE_TREE}" -c core.quotepath=off format-patch "${FORMAT_PATCH_FLAGS[@]}" \
    -o "${out}" "${BASE_TAG}..HEAD" >/dev/null
}

# staging_modules: the staging module names listed in the upstream go.work.
staging_modules() {
  sed -n 's#^[[:space:]]*\./staging/src/k8s.io/\([^[:space:]]*\)$#\1#p' "$1"
}

# module_dir MODULE@VERSION: download a module with the Go module proxy and print its directory.
module_dir() {
  (cd /tmp && go mod download -json "$1" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
}

# fork_version: the version stamped into the patched binaries, v1.37.1+configsnapshot.<tree id>.
# The tree id is git's hash of the patched source, so the same series gives the same version
# whoever builds it; SemVer build metadata (+...) keeps the release ordering of v1.37.1.
fork_version() {
  echo "${KUBE_VERSION}+configsnapshot.$(git -C "${KUBE_TREE}" rev-parse --short=12 'HEAD^{tree}')"
}
