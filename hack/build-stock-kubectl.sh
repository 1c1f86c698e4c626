#!/usr/bin/env bash
# Build kubectl (or the commands given as arguments) from the tree's pristine base commit (upstream
# v1.37.1, none of our patches) into _output/bin/stock/. kubectl is the client nearly every user
# runs: the e2e tests run the user-visible flows (kubectl rollout undo) with it, so they prove the
# feature works with clients nobody here wrote. make upgrade builds kube-apiserver and
# kube-controller-manager too.
set -o errexit -o nounset -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

[[ -d ${KUBE_TREE}/.git ]] || die "no tree at ${KUBE_TREE}: run make tree first"
STOCK_TREE=${FORK_OUTPUT}/stock-kubernetes
base=$(git -C "${KUBE_TREE}" rev-parse "${BASE_TAG}^{commit}")

# A worktree of the tree's repository at the base commit: nothing to download, nothing to apply.
if ! git -C "${STOCK_TREE}" rev-parse --git-dir >/dev/null 2>&1; then
  git -C "${KUBE_TREE}" worktree prune
  git -C "${KUBE_TREE}" worktree add --quiet --detach "${STOCK_TREE}" "${base}" >/dev/null
fi
[[ $(git -C "${STOCK_TREE}" rev-parse HEAD) == "${base}" ]] || git -C "${STOCK_TREE}" checkout --quiet --detach "${base}"
[[ -z $(git -C "${STOCK_TREE}" status --porcelain) ]] || die "${STOCK_TREE} has local changes; remove it and run again"

# --worktree-only: just the worktree (hack/update-stock-fixtures.sh builds in it).
[[ ${1:-} != --worktree-only ]] || exit 0

# Arguments: the commands to build (default kubectl), e.g. kube-apiserver kube-controller-manager
# for make upgrade.
commands=("$@")
((${#commands[@]})) || commands=(kubectl)
ldflags=$(version_ldflags "${KUBE_VERSION}" gitTreeState=clean)
for cmd in "${commands[@]}"; do
  out=${FORK_BIN}/stock/${cmd}
  if [[ -x ${out} && $(cat "${out}.base" 2>/dev/null) == "${base}" ]]; then
    log "stock ${cmd} ${KUBE_VERSION} is up to date"
    continue
  fi
  log "building stock ${cmd} ${KUBE_VERSION} (unpatched)"
  mkdir -p "$(dirname "${out}")"
  at_tree_path "${STOCK_TREE}" go build -ldflags "${ldflags}" -o "${out}" "./cmd/${cmd}"
  echo "${base}" >"${out}.base"
done
