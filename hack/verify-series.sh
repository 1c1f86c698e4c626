#!/usr/bin/env bash
# make verify-series: every patch of the series builds, and the tests of the packages it touches
# pass, at its own commit (bisectability). For each commit of the tree on top of the base, in a
# worktree of the tree: `go build` of every package the commit touches, `go vet` of them (which
# compiles their tests too), and `go test` of those that are not integration or e2e packages
# (those need etcd and a cluster: make test runs them on the final tree). Long on two cores (the build cache makes commits after the first cheaper);
# part of make verify (its last check, walk), not of make test. SERIES_FROM=N starts at patch N,
# SERIES_TO=M stops after patch M. A patch followed by its
# generated files ("...: update generated files ...", as upstream PRs end an API change with the
# output of hack/update-codegen.sh) is checked together with them, at the generated commit.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

[[ -d ${KUBE_TREE}/.git ]] || die "no tree at ${KUBE_TREE}: run make tree first"
work=$(mktemp -d)
worktree=${work}/series
# shellcheck disable=SC2317 # called by the trap
cleanup() {
  git -C "${KUBE_TREE}" worktree remove --force "${worktree}" >/dev/null 2>&1 || true
  rm -rf "${work}"
}
trap cleanup EXIT
git -C "${KUBE_TREE}" worktree add -q --detach "${worktree}" "${BASE_TAG}"

failures=()
n=0
mapfile -t commits < <(git -C "${KUBE_TREE}" rev-list --reverse "${BASE_TAG}..HEAD")
# The walk is of the series in patches/: a tree whose HEAD is elsewhere (another commit checked
# out, a rebase in progress) would walk something else and still say PASS.
patches=$(find "${PATCHES_DIR}" -maxdepth 1 -name '*.patch' | wc -l)
((${#commits[@]} == patches)) ||
  die "the tree's HEAD has ${#commits[@]} commits on top of ${BASE_TAG}, patches/ has ${patches}: check out the series' tip (make tree) first"
from=
for i in "${!commits[@]}"; do
  commit=${commits[i]}
  n=$((i + 1))
  subject=$(git -C "${KUBE_TREE}" log -1 --format=%s "${commit}")
  [[ -n ${from} ]] || from=${commit}^
  next=${commits[i + 1]:-}
  if [[ -n ${next} ]] && git -C "${KUBE_TREE}" log -1 --format=%s "${next}" | grep -q 'update generated files'; then
    log "$(printf '%04d' "${n}") ${subject}: checked with the generated files that follow"
    continue
  fi
  if ((n < ${SERIES_FROM:-1})); then from=; continue; fi
  if ((n > ${SERIES_TO:-${#commits[@]}})); then n=$((n - 1)) && break; fi
  git -C "${worktree}" checkout -q "${commit}"
  # The Go packages (directories) the commit (and a change it completes) adds or changes.
  mapfile -t pkgs < <(git -C "${worktree}" diff --name-only --diff-filter=AM "${from}" "${commit}" -- '*.go' |
    grep -v '/testdata/' | xargs -r -n1 dirname | sort -u | sed 's|^|./|')
  from=
  log "$(printf '%04d' "${n}") ${subject}: ${#pkgs[@]} packages"
  ((${#pkgs[@]})) || continue
  unit=()
  for p in "${pkgs[@]}"; do
    case ${p} in ./test/integration/* | ./test/e2e*) ;; *) unit+=("${p}") ;; esac
  done
  ok=1
  (cd "${worktree}" && go build "${pkgs[@]}" && go vet "${pkgs[@]}") >"${work}/log" 2>&1 || ok=
  if [[ -n ${ok} && ${#unit[@]} -gt 0 ]]; then (cd "${worktree}" && go test -count=1 "${unit[@]}") >>"${work}/log" 2>&1 || ok=; fi
  if [[ -z ${ok} ]]; then
    # What failed; the last lines when none of them has the usual form (a build error such as
    # "no non-test Go files" names no file and line).
    { grep -E '^(---|FAIL|ok|#)|\.go:[0-9]+' "${work}/log" || tail -5 "${work}/log"; } | head -30 >&2
    failures+=("$(printf '%04d' "${n}")")
  fi
done
if ((${#failures[@]})); then
  echo "make verify-series: FAIL (patches ${failures[*]})"
  exit 1
fi
walked="${n} patches"
[[ -z ${SERIES_FROM:-}${SERIES_TO:-} ]] || walked="patches $(printf '%04d' "${SERIES_FROM:-1}") to $(printf '%04d' "${n}") of ${#commits[@]}"
echo "make verify-series: PASS (${walked})"
