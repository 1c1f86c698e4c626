#!/usr/bin/env bash
# Export the commits on top of the upstream base in _output/kubernetes as patches/.
# The output is stable: re-exporting an unchanged tree rewrites nothing (see FORMAT_PATCH_FLAGS).
#
# Refuses while a git am or rebase is in progress in the tree, and when the tree holds fewer
# commits than patches/ holds patches (patches that never applied, after a failed 'make tree',
# would be deleted). FORCE=1 overrides the second check only, for a series that was shortened
# on purpose (commits squashed or dropped).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

[[ -d ${KUBE_TREE}/.git ]] || die "no tree at ${KUBE_TREE}: run make tree first"
die_if_tree_busy
if [[ -n $(git -C "${KUBE_TREE}" status --porcelain) ]]; then
  git -C "${KUBE_TREE}" status --short | head -20 >&2
  die "the tree has uncommitted changes: commit them in ${KUBE_TREE#"${FORK_ROOT}"/} first"
fi
git -C "${KUBE_TREE}" rev-parse -q --verify "${BASE_TAG}" >/dev/null ||
  die "the tree has no ${BASE_TAG} tag: run 'make tree FORCE=1' to materialize it again"

commits=$(git -C "${KUBE_TREE}" rev-list --count "${BASE_TAG}..HEAD")
patches=$(find "${PATCHES_DIR}" -maxdepth 1 -name '*.patch' 2>/dev/null | wc -l)
if ((commits < patches)); then
  if [[ -n ${FORCE:-} ]]; then
    log "FORCE set: exporting ${commits} commits although patches/ holds ${patches} patches (the count check is overridden; nothing else is)"
  else
    die "the tree has ${commits} commits on top of ${BASE_TAG} but patches/ holds ${patches} patches: exporting would delete patches that are not in the tree (did 'make tree' stop at a patch that does not apply?). Apply them first ('make tree'), or, if you squashed or dropped commits on purpose, run 'make patches FORCE=1'."
  fi
fi

tmp=$(mktemp -d)
trap 'rm -rf "${tmp}"' EXIT
export_series "${tmp}"
mkdir -p "${PATCHES_DIR}"
if same_series "${tmp}" >/dev/null 2>&1; then
  log "patches/ is already up to date (${patches} patches)"
else
  rm -f "${PATCHES_DIR}"/*.patch
  cp "${tmp}"/*.patch "${PATCHES_DIR}/" 2>/dev/null || true
  log "exported $(find "${PATCHES_DIR}" -maxdepth 1 -name '*.patch' | wc -l) patches to patches/"
fi
git -C "${KUBE_TREE}" rev-parse HEAD >"${KUBE_TREE}/.git/fork-synced"
