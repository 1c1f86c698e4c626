#!/usr/bin/env bash
# Checks that the fork is whole (make verify):
#   series     patches/ is exactly what the tree's commits export to, and the tree is clean
#   release    patches/ has not changed since hack/RELEASE was last raised, and CHANGELOG.md has
#              that release's section: every build of a changed series has its own number
#   benchmarks docs/benchmarks.md's summary is what its sections say (hack/bench-summary.sh), and
#              marks the sections whose run was of another tree than the series'
#   apply      patches/ applies with plain 'git am' to a pristine upstream tree, giving the tree's content
#   gofmt      every Go file the series touches is gofmt'ed
#   generated  re-running the generators (hack/update-generated.sh) changes nothing
#   rbac       the RBAC bootstrap policy fixtures are up to date
#   upstream   upstream's own hack/verify-*.sh that run on this machine (no internet, no Docker,
#              no vendor/ or hack/tools, which the module proxy does not serve), run in the tree:
#              UPSTREAM_CHECKS below; docs/development.md lists those not run and why
#   lint       golangci-lint with upstream's hack/golangci.yaml (and its logcheck and kube-api-linter
#              plugins; pinned in hack/tools/lint) on the packages the series touches, reporting what
#              the series adds (--new-from-rev), as upstream's pull-request job does
#   typecheck  upstream's hack/verify-typecheck.sh (every platform) on the packages the series touches,
#              and upstream's import-boss (as hack/verify-import-boss.sh runs it) on them
#   spelling   upstream's misspell invocation (hack/verify-spelling.sh) over the tree, and over this
#              repository's own files
#   shell      this repository's scripts, and any shell script the series touches in the tree, with
#              the options of upstream's hack/verify-shellcheck.sh
#   walk       every patch builds and passes its packages' unit tests at its own commit
#              (hack/verify-series.sh, about 10 minutes)
# hack/verify.sh [check...] runs some of them.
#
# As root on Debian, verifying installs the two Debian packages it needs when they are missing
# (protobuf-compiler for 'generated', shellcheck for 'shell'), as 'make test' installs the real
# node's; otherwise those checks fail and say what to install. The linters are built from the
# module proxy into _output/bin/lint.
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
  if ! same_series "${out}" >&2; then
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
  "${FORK_ROOT}/hack/install-protoc.sh" || return 1
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

# series_go_dirs prints the directories of the Go files that the series adds or changes,
# relative to the tree.
series_go_dirs() {
  git -C "${KUBE_TREE}" diff --name-only --diff-filter=AM "${BASE_TAG}" -- '*.go' | xargs -r -n1 dirname | sort -u
}

# lint_tools builds the linters pinned in hack/tools/lint into LINT_BIN.
LINT_BIN=${FORK_BIN}/lint
lint_tools() {
  mkdir -p "${LINT_BIN}"
  local mod=${FORK_ROOT}/hack/tools/lint
  go -C "${mod}" build -o "${LINT_BIN}/golangci-lint" github.com/golangci/golangci-lint/v2/cmd/golangci-lint &&
    go -C "${mod}" build -o "${LINT_BIN}/misspell" github.com/golangci/misspell/cmd/misspell &&
    go -C "${mod}" build -buildmode=plugin -o "${LINT_BIN}/logcheck.so" sigs.k8s.io/logtools/logcheck/plugin &&
    go -C "${mod}" build -buildmode=plugin -o "${LINT_BIN}/kube-api-linter.so" sigs.k8s.io/kube-api-linter/pkg/plugin
}

check_lint() {
  lint_tools >&2 || return 1
  # Upstream's configuration without the 'sorted' plugin, which only upstream's hack/tools has,
  # and with the plugins where lint_tools put them.
  local config=${TMP_DIR}/golangci.yaml dirs=()
  awk '/^    - sorted$/ { next }
    /^      sorted:$/ { skip = 1; next }
    skip && /^      [a-z]/ { skip = 0 }
    !skip { print }' "${KUBE_TREE}/hack/golangci.yaml" |
    sed -e "s;path: _output/local/bin/;path: ${LINT_BIN}/;" >"${config}"
  mapfile -t dirs < <(series_go_dirs | sed -e 's;^;./;' -e 's;$;/;')
  (cd "${KUBE_TREE}" && "${LINT_BIN}/golangci-lint" run --config="${config}" --new-from-rev="${BASE_TAG}" --timeout=30m "${dirs[@]}" >&2)
}

check_typecheck() {
  local dirs=()
  mapfile -t dirs < <(series_go_dirs | sed -e 's;^;./;' -e 's;$;/;')
  (cd "${KUBE_TREE}" && hack/verify-typecheck.sh "${dirs[@]}" >"${TMP_DIR}/typecheck.log" 2>&1) || {
    tail -30 "${TMP_DIR}/typecheck.log" >&2
    return 1
  }
  (cd "${KUBE_TREE}" && GOPROXY=off go run ./cmd/import-boss "${dirs[@]}" >&2)
}

check_spelling() {
  lint_tools >&2 || return 1
  local skip
  # As hack/verify-spelling.sh does, with the misspell it would install from hack/tools.
  skip=$(sed "s| | -e |g" "${KUBE_TREE}/hack/.spelling_failures")
  (cd "${KUBE_TREE}" && git ls-files | grep -v -e "${skip}" | xargs -d '\n' "${LINT_BIN}/misspell" -i "Creater,creater,ect" -error -o stderr) &&
    (cd "${FORK_ROOT}" && git ls-files | grep -v -e '^patches/' -e 'go\.mod$' -e 'go\.sum$' | xargs -d '\n' "${LINT_BIN}/misspell" -i "Creater,creater,ect" -error -o stderr)
}

check_shell() {
  apt_install shellcheck || return 1
  # The lints that upstream's hack/verify-shellcheck.sh disables.
  local disabled scripts=() f
  disabled=$(sed -n '/^disabled=(/,/^)/p' "${KUBE_TREE}/hack/verify-shellcheck.sh" | grep -o '^ *[0-9]\+' | tr -d ' ' | paste -sd,)
  [[ -n ${disabled} ]] || { echo "cannot read the disabled lints of hack/verify-shellcheck.sh" >&2; return 1; }
  while IFS= read -r f; do
    if [[ ${f} == *.sh ]] || head -1 "${FORK_ROOT}/${f}" | grep -q '^#!.*sh$'; then scripts+=("${FORK_ROOT}/${f}"); fi
  done < <(git -C "${FORK_ROOT}" ls-files hack kind)
  while IFS= read -r f; do scripts+=("${KUBE_TREE}/${f}"); done < <(git -C "${KUBE_TREE}" diff --name-only --diff-filter=AM "${BASE_TAG}" -- '*.sh')
  shellcheck --external-sources --exclude="${disabled}" "${scripts[@]}" >&2
}

check_release() {
  local n raised
  n=$(<"${FORK_ROOT}/hack/RELEASE")
  raised=$(git -C "${FORK_ROOT}" log -1 --format=%H -- hack/RELEASE)
  if [[ -n $(git -C "${FORK_ROOT}" diff --name-only "${raised}" -- patches/) ||
    -n $(git -C "${FORK_ROOT}" ls-files --others --exclude-standard -- patches/) ]]; then
    echo "patches/ changed since release ${n} was set (commit ${raised:0:12}): raise hack/RELEASE, add its section to CHANGELOG.md and commit both" >&2
    return 1
  fi
  if ! grep -Eq "^## .*v1\.37\.1\+configsnapshot\.${n}([^0-9]|$)" "${FORK_ROOT}/CHANGELOG.md"; then
    echo "CHANGELOG.md has no section for v1.37.1+configsnapshot.${n}" >&2
    return 1
  fi
}

check_benchmarks() {
  "${FORK_ROOT}/hack/bench-summary.sh" --check
}

check_walk() {
  "${FORK_ROOT}/hack/verify-series.sh" >&2
}

check_rbac() {
  (cd "${KUBE_TREE}" && go test ./plugin/pkg/auth/authorizer/rbac/bootstrappolicy/ -run 'TestBootstrap|TestClusterRoles|TestWorkloadConfigSnapshot' -count=1 >&2)
}

checks=("$@")
((${#checks[@]})) || checks=(series release benchmarks apply gofmt generated rbac upstream lint typecheck spelling shell walk)
for c in "${checks[@]}"; do
  log "verify: ${c}"
  if ! "check_${c}"; then failures+=("${c}"); fi
done
if ((${#failures[@]})); then
  echo "make verify: FAIL (${failures[*]})"
  exit 1
fi
echo "make verify: PASS (${checks[*]})"
