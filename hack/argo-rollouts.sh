#!/usr/bin/env bash
# Argo Rollouts built against this release, as this repository builds Kubernetes: the module
# github.com/argoproj/argo-rollouts@${ARGO_VERSION}, materialized from the Go module proxy into
# _output/argo-rollouts as a git repository whose first commit is pristine upstream, with the
# series patches/argo-rollouts/ on top (it moves Argo Rollouts to the release's modules and calls
# the snapshot library k8s.io/config-snapshot where a Rollout makes a ReplicaSet).
#
#   hack/argo-rollouts.sh tree     materialize the tree and apply the series (idempotent)
#   hack/argo-rollouts.sh patches  export the tree's commits back to patches/argo-rollouts/
#   hack/argo-rollouts.sh build    build rollouts-controller and kubectl-argo-rollouts into _output/bin
#   hack/argo-rollouts.sh test     Argo Rollouts' own unit tests of the packages the series changes
#   hack/argo-rollouts.sh walk     every patch of the series builds (go build ./...) at its own commit
#
# The tree's go.mod replaces the k8s.io modules with _output/kubernetes (make tree first).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

ARGO_MODULE=github.com/argoproj/argo-rollouts
ARGO_VERSION=${ARGO_VERSION:-v1.10.1}
KUBERNETES_TREE=${KUBE_TREE}
# The functions of lib/common.sh act on KUBE_TREE, PATCHES_DIR and BASE_TAG: here, Argo's.
KUBE_TREE=${FORK_OUTPUT}/argo-rollouts
PATCHES_DIR=${FORK_ROOT}/patches/argo-rollouts
BASE_TAG=upstream/argo-rollouts-${ARGO_VERSION}
# Packages whose tests run (test): those the series changes, and the controller's.
ARGO_TEST_PACKAGES=(./rollout/... ./utils/replicaset/... ./pkg/apis/rollouts/... ./controller/...)

create_base() {
  local dir
  dir=$(module_dir "${ARGO_MODULE}@${ARGO_VERSION}")
  [[ -d ${dir} ]] || die "could not download ${ARGO_MODULE}@${ARGO_VERSION}"
  rm -rf "${KUBE_TREE}"
  mkdir -p "${KUBE_TREE}"
  cp -a "${dir}/." "${KUBE_TREE}/"
  chmod -R u+w "${KUBE_TREE}"
  git -C "${KUBE_TREE}" init -q -b master
  git -C "${KUBE_TREE}" config gc.auto 0
  printf '* -text\n' >"${KUBE_TREE}/.git/info/attributes"
  printf '/rollouts-controller\n/kubectl-argo-rollouts\n' >>"${KUBE_TREE}/.git/info/exclude"
  fork_git add -A -f .
  fork_git commit -q -m "Argo Rollouts ${ARGO_VERSION}" -m "Materialized from ${ARGO_MODULE}@${ARGO_VERSION} (Go module proxy)."
  fork_git tag "${BASE_TAG}"
}

apply_series() {
  shopt -s nullglob
  local patches=("${PATCHES_DIR}"/*.patch)
  shopt -u nullglob
  ((${#patches[@]} > 0)) || return 0
  committer_ident "${KUBE_TREE}"
  git -C "${KUBE_TREE}" am -q --keep-cr --committer-date-is-author-date "${patches[@]}" ||
    die "$(am_stopped_at) does not apply to Argo Rollouts ${ARGO_VERSION} plus the patches before it (git am left in progress in ${KUBE_TREE#"${FORK_ROOT}"/})"
  git -C "${KUBE_TREE}" rev-parse HEAD >"${KUBE_TREE}/.git/fork-synced"
}

series_matches() {
  local out rc=0
  out=$(mktemp -d)
  export_series "${out}"
  mkdir -p "${PATCHES_DIR}"
  same_series "${out}" >/dev/null 2>&1 || rc=$?
  rm -rf "${out}"
  return "${rc}"
}

tree() {
  [[ -d ${KUBERNETES_TREE}/.git ]] || die "no Kubernetes tree at ${KUBERNETES_TREE#"${FORK_ROOT}"/}: run make tree first"
  if [[ -d ${KUBE_TREE}/.git ]]; then
    die_if_tree_busy
    if series_matches; then
      log "Argo Rollouts tree is up to date with ${PATCHES_DIR#"${FORK_ROOT}"/}"
      return
    fi
    local mark=${KUBE_TREE}/.git/fork-synced
    if [[ -n $(git -C "${KUBE_TREE}" status --porcelain) || ! -f ${mark} || $(cat "${mark}") != "$(git -C "${KUBE_TREE}" rev-parse HEAD)" ]]; then
      die "${KUBE_TREE#"${FORK_ROOT}"/} holds work that is not in ${PATCHES_DIR#"${FORK_ROOT}"/}: export it ($0 patches) or remove the tree"
    fi
  fi
  log "materializing ${ARGO_MODULE}@${ARGO_VERSION}"
  create_base
  apply_series
  log "Argo Rollouts tree ready at ${KUBE_TREE#"${FORK_ROOT}"/}"
}

patches() {
  [[ -d ${KUBE_TREE}/.git ]] || die "no tree at ${KUBE_TREE#"${FORK_ROOT}"/}: run $0 tree first"
  die_if_tree_busy
  [[ -z $(git -C "${KUBE_TREE}" status --porcelain) ]] || die "${KUBE_TREE#"${FORK_ROOT}"/} has uncommitted changes"
  local out
  out=$(mktemp -d)
  export_series "${out}"
  mkdir -p "${PATCHES_DIR}"
  rm -f "${PATCHES_DIR}"/*.patch
  cp "${out}"/*.patch "${PATCHES_DIR}/"
  rm -rf "${out}"
  git -C "${KUBE_TREE}" rev-parse HEAD >"${KUBE_TREE}/.git/fork-synced"
  log "exported $(find "${PATCHES_DIR}" -maxdepth 1 -name '*.patch' | wc -l) patches to ${PATCHES_DIR#"${FORK_ROOT}"/}"
}

build() {
  tree
  mkdir -p "${FORK_BIN}"
  log "building rollouts-controller and kubectl-argo-rollouts"
  (cd "${KUBE_TREE}" && go_quiet go build -o "${FORK_BIN}/" ./cmd/rollouts-controller ./cmd/kubectl-argo-rollouts)
  log "built ${FORK_BIN#"${FORK_ROOT}"/}/rollouts-controller and kubectl-argo-rollouts"
}

unit_tests() {
  tree
  # -vet=off: Go 1.26.8's vet fails upstream's own printf calls (non-constant format strings in
  # rollout/trafficrouting.go and others), not the series'.
  (cd "${KUBE_TREE}" && go_quiet go test -vet=off -count=1 "${ARGO_TEST_PACKAGES[@]}")
}

walk() {
  tree
  local worktree=${FORK_OUTPUT}/argo-rollouts-walk commit
  git -C "${KUBE_TREE}" worktree remove --force "${worktree}" >/dev/null 2>&1 || true
  # A sibling of the tree, so that go.mod's ../kubernetes is the release's tree here too.
  git -C "${KUBE_TREE}" worktree add -q --detach "${worktree}" "${BASE_TAG}"
  # shellcheck disable=SC2064 # the worktree's path is fixed now
  trap "git -C '${KUBE_TREE}' worktree remove --force '${worktree}' >/dev/null 2>&1 || true" EXIT
  for commit in $(git -C "${KUBE_TREE}" rev-list --reverse "${BASE_TAG}..HEAD"); do
    git -C "${worktree}" checkout -q "${commit}"
    (cd "${worktree}" && go_quiet go build ./...) || die "$(git -C "${worktree}" log -1 --format=%s) does not build"
    log "builds: $(git -C "${worktree}" log -1 --format=%s)"
  done
}

case ${1:-} in
tree) tree ;;
patches) patches ;;
build) build ;;
test) unit_tests ;;
walk) walk ;;
*) die "usage: $0 tree|patches|build|test|walk" ;;
esac
