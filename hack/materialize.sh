#!/usr/bin/env bash
# Materialize Kubernetes ${KUBE_VERSION} from the Go module proxy into _output/kubernetes as a
# git repository whose first commit is pristine upstream, then apply patches/ with git am.
#
# Idempotent: when the tree already holds exactly the series in patches/, nothing is done.
# When patches/ changed (for example after a git pull) and the tree has no work that is not
# exported, the tree is reset to the base and the series re-applied. When the tree has
# commits or edits that are not in patches/, it refuses and says what to do, so nothing is lost.
#
# When a patch does not apply, the git am is left in progress (git am --show-current-patch,
# --continue, --abort work as usual) and the script names the patch and exits non-zero. While a
# git am or rebase is in progress, the script changes nothing, FORCE=1 included.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

FORCE=${FORCE:-}

TMP_DIR=$(mktemp -d)
STAGING=
cleanup() { rm -rf "${TMP_DIR}" ${STAGING:+"${STAGING}"}; }
trap cleanup EXIT

create_base() {
  mkdir -p "${FORK_OUTPUT}"
  # Laid out next to the tree (same file system), so that the final mv is a rename.
  STAGING=$(mktemp -d "${FORK_OUTPUT}/kubernetes.tmp.XXXXXX")
  chmod 0755 "${STAGING}"
  local tmp=${STAGING}
  log "downloading k8s.io/kubernetes@${KUBE_VERSION} from the module proxy"
  local kdir
  kdir=$(module_dir "k8s.io/kubernetes@${KUBE_VERSION}")
  [[ -d ${kdir} ]] || die "could not download k8s.io/kubernetes@${KUBE_VERSION}"
  cp -a "${kdir}/." "${tmp}/"
  local mods=() m
  mapfile -t mods < <(staging_modules "${tmp}/go.work")
  ((${#mods[@]} > 0)) || die "no staging modules found in ${tmp}/go.work"
  log "downloading ${#mods[@]} staging modules at ${STAGING_VERSION}"
  local args=() samples=()
  for m in "${mods[@]}"; do args+=("k8s.io/${m}@${STAGING_VERSION}"); done
  if ! (cd /tmp && go mod download "${args[@]}"); then
    # The proxy does not always serve the sample modules of a patch release (k8s.io/sample-*
    # at v0.37.2 were refused on 2026-11-28). Nothing the release builds imports them: take
    # those of ${SAMPLES_FALLBACK_VERSION} and say so in the base commit.
    for m in "${mods[@]}"; do
      if ! (cd /tmp && go mod download "k8s.io/${m}@${STAGING_VERSION}" 2>/dev/null); then
        [[ ${m} == sample-* ]] || die "could not download k8s.io/${m}@${STAGING_VERSION}"
        (cd /tmp && go mod download "k8s.io/${m}@${SAMPLES_FALLBACK_VERSION}") || die "could not download k8s.io/${m}@${SAMPLES_FALLBACK_VERSION}"
        samples+=("${m}")
      fi
    done
  fi
  for m in "${mods[@]}"; do
    local d version=${STAGING_VERSION}
    [[ " ${samples[*]} " == *" ${m} "* ]] && version=${SAMPLES_FALLBACK_VERSION}
    d=$(module_dir "k8s.io/${m}@${version}")
    [[ -d ${d} ]] || die "could not download k8s.io/${m}@${version}"
    mkdir -p "${tmp}/staging/src/k8s.io/${m}"
    cp -a "${d}/." "${tmp}/staging/src/k8s.io/${m}/"
  done
  ((${#samples[@]} == 0)) || log "not served at ${STAGING_VERSION}, taken at ${SAMPLES_FALLBACK_VERSION}: ${samples[*]}"
  chmod -R u+w "${tmp}"
  # Module zips keep neither file modes nor symlinks. Restore what the upstream repository
  # has: executable scripts (anything starting with #!) and the top-level Makefile links.
  # shellcheck disable=SC2016 # the sh -c script expands its own arguments
  { find "${tmp}" -type f -size -2M -exec grep -lIZ -m1 '^#!' {} + 2>/dev/null || true; } |
    xargs -0 -r sh -c 'for f; do if [ "$(head -c2 "$f")" = "#!" ]; then chmod +x "$f"; fi; done' sh
  ln -s build/root/Makefile "${tmp}/Makefile"
  ln -s build/root/Makefile.generated_files "${tmp}/Makefile.generated_files"
  log "committing the pristine base"
  rm -rf "${KUBE_TREE}"
  mv "${tmp}" "${KUBE_TREE}"
  STAGING=
  git -C "${KUBE_TREE}" init -q -b master
  git -C "${KUBE_TREE}" config core.autocrlf false
  git -C "${KUBE_TREE}" config gc.auto 0
  # Store every byte as the module zip has it (upstream's .gitattributes would normalize the
  # CRLF of a few testdata files, leaving the checkout dirty).
  printf '* -text\n' >"${KUBE_TREE}/.git/info/attributes"
  # `go build ./cmd/<binary>` run in the tree writes the binary at its root: never commit one.
  printf '/kube-*\n/kubectl\n/kubelet\n/kubeadm\n' >>"${KUBE_TREE}/.git/info/exclude"
  fork_git add -A -f .
  fork_git commit -q -m "Kubernetes ${KUBE_VERSION}" \
    -m "Materialized from k8s.io/kubernetes@${KUBE_VERSION} and its staging modules at ${STAGING_VERSION} (Go module proxy)${samples[*]:+; ${samples[*]} at ${SAMPLES_FALLBACK_VERSION}, not served at ${STAGING_VERSION}}."
  fork_git tag "${BASE_TAG}"
}

# apply_series: git am of the whole series in one go, so that when a patch does not apply the
# git am stops there, in progress, with the remaining patches queued behind it.
apply_series() {
  shopt -s nullglob
  local patches=("${PATCHES_DIR}"/*.patch)
  shopt -u nullglob
  ((${#patches[@]} > 0)) || { log "patches/ is empty: the tree is pristine ${KUBE_VERSION}"; return 0; }
  log "applying ${#patches[@]} patches"
  committer_ident "${KUBE_TREE}"
  if ! git -C "${KUBE_TREE}" am -q --keep-cr --committer-date-is-author-date "${patches[@]}"; then
    [[ $(tree_operation) == am ]] || die "git am failed before it applied anything (see above)"
    die "$(am_stopped_at) does not apply to ${KUBE_VERSION} plus the patches before it.
The git am is left in progress in ${KUBE_TREE#"${FORK_ROOT}"/}, after the last patch that applied.
$(am_help)"
  fi
}

# series_matches: 0 when the commits on top of the base export to exactly patches/.
series_matches() {
  local out=${TMP_DIR}/series
  rm -rf "${out}"
  export_series "${out}"
  mkdir -p "${PATCHES_DIR}"
  same_series "${out}" >/dev/null 2>&1
}

main() {
  # First of all: never touch a tree in the middle of a git am or rebase (that is someone's work).
  if [[ -d ${KUBE_TREE}/.git ]]; then die_if_tree_busy; fi
  if [[ -n ${FORCE} && -d ${KUBE_TREE} ]]; then
    log "FORCE set: discarding ${KUBE_TREE}"
    rm -rf "${KUBE_TREE}"
  fi
  if [[ ! -d ${KUBE_TREE}/.git ]] || ! git -C "${KUBE_TREE}" rev-parse -q --verify "${BASE_TAG}" >/dev/null; then
    create_base
    apply_series
    log "tree ready at ${KUBE_TREE#"${FORK_ROOT}"/}"
    return
  fi
  if series_matches; then
    log "tree is up to date with patches/"
    return
  fi
  if [[ -n $(git -C "${KUBE_TREE}" status --porcelain) ]]; then
    die "the tree has uncommitted changes and differs from patches/: commit them and run 'make patches', or run 'make tree FORCE=1' to discard the tree"
  fi
  # The tree differs from patches/. If the tree still holds what was last applied or exported,
  # patches/ moved on (e.g. git pull): re-apply. Otherwise the tree holds new work: keep it.
  local mark=${KUBE_TREE}/.git/fork-synced
  if [[ -f ${mark} && $(cat "${mark}") == "$(git -C "${KUBE_TREE}" rev-parse HEAD)" ]]; then
    log "patches/ changed: re-applying the series on the base"
    git -C "${KUBE_TREE}" reset -q --hard "${BASE_TAG}"
    apply_series
    return
  fi
  die "the tree has commits that are not in patches/: run 'make patches' to export them, or 'make tree FORCE=1' to discard them"
}

main "$@"
git -C "${KUBE_TREE}" rev-parse HEAD >"${KUBE_TREE}/.git/fork-synced"
