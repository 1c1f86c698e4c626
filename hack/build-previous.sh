#!/usr/bin/env bash
# Build the previous release's kube-apiserver and kube-controller-manager into
# _output/bin/previous/, for make upgrade's last step (an upgrade from the previous build, and a
# downgrade to it, roll nothing). The previous release is the newest commit of this repository
# whose hack/RELEASE is one less than today's; its patches/ are applied to the worktree of the
# tree's base commit, and the binaries are stamped with its version, v1.37.1+configsnapshot.<N-1>.
# Prints the directory of the binaries.
#
# Needs the repository's history (a shallow clone fails here with what to fetch).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

[[ -d ${KUBE_TREE}/.git ]] || die "no tree at ${KUBE_TREE}: run make tree first"
current=$(tr -d '[:space:]' <"${FORK_ROOT}/hack/RELEASE")
previous=$((current - 1))
((previous >= 1)) || die "release ${current} has no previous release"

# The newest commit whose hack/RELEASE says the previous number.
commit=
while read -r c; do
  if [[ $(git -C "${FORK_ROOT}" show "${c}:hack/RELEASE" 2>/dev/null | tr -d '[:space:]') == "${previous}" ]]; then
    commit=${c}
    break
  fi
done < <(git -C "${FORK_ROOT}" log --format=%H -- hack/RELEASE)
[[ -n ${commit} ]] || die "no commit of this repository has hack/RELEASE ${previous} (a shallow clone? git fetch --unshallow)"

OUT=${FORK_BIN}/previous
STOCK_TREE=${FORK_OUTPUT}/stock-kubernetes
version="${KUBE_VERSION}+configsnapshot.${previous}"
if [[ -x ${OUT}/kube-apiserver && -x ${OUT}/kube-controller-manager && $(cat "${OUT}/COMMIT" 2>/dev/null) == "${commit}" ]]; then
  log "previous release ${version} (${commit:0:12}) is built"
  echo "${OUT}"
  exit 0
fi

# The previous release's patches applied, for the build, to the worktree of the base commit that
# the stock binaries are built in (hack/build-stock-kubectl.sh), and built at the tree's path
# (at_tree_path): the packages that the two releases share come from the build cache of the
# tree's own builds. The worktree goes back to the base commit afterwards, as a failed or
# interrupted run leaves it for build-stock-kubectl.sh to put back.
"${FORK_ROOT}/hack/build-stock-kubectl.sh" --worktree-only
base=$(git -C "${KUBE_TREE}" rev-parse "${BASE_TAG}^{commit}")
patches=$(mktemp -d)
restore() {
  rm -rf "${patches}"
  git -C "${STOCK_TREE}" am --abort >/dev/null 2>&1 || true
  git -C "${STOCK_TREE}" checkout --quiet --force --detach "${base}"
}
trap restore EXIT
git -C "${FORK_ROOT}" archive "${commit}" patches | tar -x -C "${patches}"
shopt -s nullglob
files=("${patches}"/patches/*.patch)
shopt -u nullglob
log "applying release ${previous}'s ${#files[@]} patches (repository ${commit:0:12}) to ${STOCK_TREE#"${FORK_ROOT}"/}"
committer_ident "${STOCK_TREE}"
git -C "${STOCK_TREE}" am -q --keep-cr --committer-date-is-author-date "${files[@]}" >&2

ldflags=$(version_ldflags "${version}" "gitCommit=$(git -C "${STOCK_TREE}" rev-parse HEAD)" gitTreeState=clean)
mkdir -p "${OUT}"
rm -f "${OUT}/COMMIT"
for cmd in kube-apiserver kube-controller-manager; do
  log "building ${cmd} ${version} (the previous release)"
  go_quiet at_tree_path "${STOCK_TREE}" go build -ldflags "${ldflags}" -o "${OUT}/${cmd}" "./cmd/${cmd}"
done
echo "${commit}" >"${OUT}/COMMIT"
echo "${OUT}"
