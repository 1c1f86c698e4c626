#!/usr/bin/env bash
# Export the commits on top of the upstream base in _output/kubernetes as patches/.
# The output is stable: re-exporting an unchanged tree rewrites nothing (see FORMAT_PATCH_FLAGS).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

[[ -d ${KUBE_TREE}/.git ]] || die "no tree at ${KUBE_TREE}: run make tree first"
if [[ -n $(git -C "${KUBE_TREE}" status --porcelain) ]]; then
  git -C "${KUBE_TREE}" status --short | head -20 >&2
  die "the tree has uncommitted changes: commit them in ${KUBE_TREE#"${FORK_ROOT}"/} first"
fi
tmp=$(mktemp -d)
trap 'rm -rf "${tmp}"' EXIT
export_series "${tmp}"
mkdir -p "${PATCHES_DIR}"
if diff -r -q "${tmp}" "${PATCHES_DIR}" >/dev/null 2>&1; then
  log "patches/ is already up to date ($(find "${PATCHES_DIR}" -name '*.patch' | wc -l) patches)"
else
  rm -f "${PATCHES_DIR}"/*.patch
  cp "${tmp}"/*.patch "${PATCHES_DIR}/" 2>/dev/null || true
  log "exported $(find "${PATCHES_DIR}" -name '*.patch' | wc -l) patches to patches/"
fi
git -C "${KUBE_TREE}" rev-parse HEAD >"${KUBE_TREE}/.git/fork-synced"
