#!/usr/bin/env bash
# Checks that the fork is whole (make verify):
#   series     patches/ is exactly what the tree's commits export to, and the tree is clean
#   apply      patches/ applies with plain 'git am' to a pristine upstream tree, giving the tree's content
#   gofmt      every Go file the series touches is gofmt'ed
#   generated  re-running the generators (hack/update-generated.sh) changes nothing
#   rbac       the RBAC bootstrap policy fixtures are up to date
#   upstream   upstream's own hack/verify-*.sh that run on this machine (no internet, no Docker,
#              no vendor/ or hack/tools, which the module proxy does not serve), run in the tree:
#              UPSTREAM_CHECKS below; README.md lists those not run and why
# hack/verify.sh [check...] runs some of them.
#
# Verifying installs nothing: without protoc, 'generated' fails and names the command that
# installs it (hack/install-protoc.sh, as root).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

[[ -d ${KUBE_TREE}/.git ]] || die "no tree at ${KUBE_TREE}: run make tree first"
die_if_tree_busy
failures=()

TMP_DIR=$(mktemp -d)
WORKTREE=
cleanup() {
  if [[ -n ${WORKTREE} ]]; then git -C "${KUBE_TREE}" worktree remove --force "${WORKTREE}" >/dev/null 2>&1 || true; fi
  rm -rf "${TMP_DIR}"
}
trap cleanup EXIT

# The checks run as 'if ! check_...', where errexit does not apply: each one returns its failures.

check_series() {
  if [[ -n $(git -C "${KUBE_TREE}" status --porcelain) ]]; then
    git -C "${KUBE_TREE}" status --short | head -20 >&2
    echo "the tree has uncommitted changes" >&2
    return 1
  fi
  local out=${TMP_DIR}/series
  export_series "${out}" || return 1
  mkdir -p "${PATCHES_DIR}"
  if ! diff -r -q "${out}" "${PATCHES_DIR}" >&2; then
    echo "patches/ and the tree differ: run 'make patches' (export) or 'make tree' (re-apply)" >&2
    return 1
  fi
}

check_apply() {
  WORKTREE=${TMP_DIR}/apply
  git -C "${KUBE_TREE}" worktree add -q --detach "${WORKTREE}" "${BASE_TAG}" || return 1
  local rc=0 p
  for p in "${PATCHES_DIR}"/*.patch; do
    [[ -e ${p} ]] || continue
    if ! git -C "${WORKTREE}" -c user.name=verify -c user.email=verify@localhost am -q "${p}" >&2; then
      echo "$(basename "${p}") does not apply with git am" >&2
      rc=1
      break
    fi
  done
  if ((rc == 0)) && [[ $(git -C "${WORKTREE}" rev-parse 'HEAD^{tree}') != $(git -C "${KUBE_TREE}" rev-parse 'HEAD^{tree}') ]]; then
    echo "applying patches/ to ${KUBE_VERSION} does not give the tree's content" >&2
    rc=1
  fi
  git -C "${KUBE_TREE}" worktree remove --force "${WORKTREE}"
  WORKTREE=
  return ${rc}
}

check_gofmt() {
  local files=() bad
  mapfile -t files < <(git -C "${KUBE_TREE}" diff --name-only --diff-filter=AM "${BASE_TAG}" -- '*.go')
  ((${#files[@]})) || return 0
  bad=$(cd "${KUBE_TREE}" && gofmt -s -l "${files[@]}") || return 1
  if [[ -n ${bad} ]]; then
    echo "not gofmt -s'ed:" >&2
    echo "${bad}" >&2
    return 1
  fi
}

check_generated() {
  "${FORK_ROOT}/hack/install-protoc.sh" --check || return 1
  INSTALL_PROTOC=0 "${FORK_ROOT}/hack/update-generated.sh" || return 1
  if [[ -n $(git -C "${KUBE_TREE}" status --porcelain) ]]; then
    git -C "${KUBE_TREE}" status --short | head -30 >&2
    echo "the generators changed the files above: commit them to the generated patch (they are left in the tree)" >&2
    return 1
  fi
}

UPSTREAM_CHECKS=(boilerplate gofmt import-aliases featuregates test-featuregates prerelease-lifecycle-tags
  api-groups pkg-names testing-import non-mutating-validation readonly-packages test-code internal-modules
  staging-meta-files conformance-requirements go-apidocs netparse-cve cli-conventions)

check_upstream() {
  local c rc=0
  for c in "${UPSTREAM_CHECKS[@]}"; do
    if ! (cd "${KUBE_TREE}" && "hack/verify-${c}.sh") >"${TMP_DIR}/verify-${c}.log" 2>&1; then
      tail -20 "${TMP_DIR}/verify-${c}.log" >&2
      echo "upstream hack/verify-${c}.sh failed" >&2
      rc=1
    fi
  done
  return ${rc}
}

check_rbac() {
  (cd "${KUBE_TREE}" && go test ./plugin/pkg/auth/authorizer/rbac/bootstrappolicy/ -run 'TestBootstrap|TestClusterRoles|TestWorkloadConfigSnapshot' -count=1 >&2)
}

checks=("$@")
((${#checks[@]})) || checks=(series apply gofmt generated rbac upstream)
for c in "${checks[@]}"; do
  log "verify: ${c}"
  if ! "check_${c}"; then failures+=("${c}"); fi
done
if ((${#failures[@]})); then
  echo "make verify: FAIL (${failures[*]})"
  exit 1
fi
echo "make verify: PASS (${checks[*]})"
