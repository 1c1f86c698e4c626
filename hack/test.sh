#!/usr/bin/env bash
# The fork's test suite (README: make test; CI: .ci/run).
#
#   monitoring   the alert rules and dashboard of monitoring/ against the series' metrics, and
#                promtool's unit tests of the rules (hack/test-monitoring.sh)
#   unit         the unit tests of every package the series touches, plus the upstream suites
#                that guard the API (round trip, validation, registry, features, RBAC, k8s.io/api),
#                after a build of make bench's P4 against the tree
#   integration  test/integration with a real kube-apiserver and etcd (from hack/install-etcd.sh)
#   e2e          the ConfigSnapshot e2e tests (upstream's framework) against the local cluster of
#                'make up' (started for the run, and stopped, unless one is running already):
#                as root on Debian with a real node (kubelet + containerd), so the tests that
#                read the snapshot files in pods run too; otherwise with fake nodes only
#   upgrade      make upgrade: stock v1.37.1 kube-apiserver and kube-controller-manager, then the
#                patched ones, stock again and patched again, then the previous release, checking
#                what rolls out at each step. Not in the default list: cold, it builds stock
#                v1.37.1 from scratch and takes 28 of the 83 minutes that all five took
#                (docs/testing.md#make-test), over the 60 that a cold make test must fit in
#
# hack/test.sh [monitoring] [unit] [integration] [e2e] [upgrade]   (the first four by default).
# Logs go to _output/test-logs/.
# Extra flags for go test: GOTESTFLAGS (e.g. GOTESTFLAGS=-v).
#
# Upstream flakes do not block a run, and our tests are never retried: a unit-test package that
# fails is run once more only when the series adds or changes nothing in it (see
# unit_retryable), a failed integration test only when it is upstream's, in a package where the
# series only adds files (see upstream_test); the summary line names every such retry, and a
# second failure fails the run. The first attempts are logged in unit.log and integration.log,
# the retries in unit-retry.log and integration-retry.log.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

UNIT_PACKAGES=(
  ./pkg/apis/core/...
  ./pkg/apis/apps/...
  ./pkg/api/pod/...
  ./pkg/api/testing/...
  ./pkg/features/...
  ./pkg/registry/apps/...
  ./pkg/registry/batch/...
  ./pkg/registry/core/pod/...
  ./pkg/registry/core/podtemplate/...
  ./pkg/registry/core/replicationcontroller/...
  ./pkg/generated/openapi/...
  ./plugin/pkg/auth/authorizer/...
  # The authorizer that grants the controllers their snapshot writes, and where it is wired.
  ./pkg/kubeapiserver/authorizer/...
  # The admission plugin that restricts the controllers, and where it is registered.
  ./plugin/pkg/admission/configsnapshotrestriction/...
  ./plugin/pkg/admission/noderestriction/...
  ./pkg/kubeapiserver/options/...
  ./pkg/controlplane/apiserver
  ./pkg/controlplane/apiserver/samples/generic/server/...
  ./staging/src/k8s.io/api/...
  ./staging/src/k8s.io/client-go/applyconfigurations/...
  # Snapshots in the controllers, and upstream's suites of what they touch.
  ./staging/src/k8s.io/component-helpers/apps/configsnapshot/...
  ./staging/src/k8s.io/config-snapshot/...
  ./pkg/controller/configsnapshot/...
  ./pkg/controller/deployment/...
  ./pkg/controller/replicaset/...
  ./pkg/controller/daemon/...
  ./pkg/controller/statefulset/...
  ./pkg/controller/history/...
  ./cmd/kube-controller-manager/app/...
  ./staging/src/k8s.io/kubectl/pkg/polymorphichelpers/...
  ./staging/src/k8s.io/kubectl/pkg/describe/...
  ./staging/src/k8s.io/kubectl/pkg/util/...
  # The bench's verdicts (hack/chaos, staged into the tree by stage_chaos).
  ./test/e2e_fork/chaos
)
# Integration tests: upstream's Deployment, DaemonSet and StatefulSet tests and ours
# (config_snapshot*_test.go: the API, the restriction, and the controller contract of
# docs/design.md as the scenarios of test/integration/snapshotscenarios, run for each kind), and
# the snapshot library in an extension controller (test/integration/snapshotextension). The
# packages run side by side (INTEGRATION_PARALLEL, go test -p): each starts its own etcd and
# kube-apiserver, and most of their time is spent waiting for controllers, so on two cores
# three at once take about as long as the slowest alone (6-7 minutes warm instead of 16).
INTEGRATION=(
  ./test/integration/deployment
  ./test/integration/daemonset
  ./test/integration/statefulset
  ./test/integration/snapshotextension
)

LOGS=${FORK_OUTPUT}/test-logs
declare -A result

# filter_output: the lines of go test output a person wants to see scroll by.
# A failed test's own lines come with it, subtests' included ("    --- FAIL: TestX/Y",
# "        env.go:752: ..."), so that a CI log that keeps only this output still says why; the
# klog lines a test's logger writes through t.Log ("    foo.go:12: I1202 ...") do not.
filter_output() {
  { grep --line-buffered -E '^(ok|FAIL|panic:)|^ *--- FAIL|^ +[^ ]+\.go:[0-9]+: |\[build failed\]|cannot|undefined' || true; } |
    { grep --line-buffered -vE '^ +[^ ]+\.go:[0-9]+: [IWEF][0-9]{4} ' || true; }
}

# failed_packages LOG: the packages that a go test log reports as failed, one a line, as go test
# names them ("k8s.io/kubernetes/pkg/...", plus " [build failed]" or " [setup failed]").
failed_packages() { awk -F'\t' '$1 == "FAIL" && $2 != "" { print $2 }' "$1" | sort -u; }

# failed_tests LOG PACKAGE: the top-level tests that a go test log reports as failed in PACKAGE,
# one a line. go test prints each package's output in one piece, ending with its "ok" or "FAIL"
# line, so the "--- FAIL: " lines since the previous package's belong to PACKAGE.
failed_tests() {
  awk -F'\t' -v pkg="$2" '
    /^--- FAIL: / { split($0, f, " "); names = names f[3] "\n"; next }
    $1 == "FAIL" && $2 == pkg { printf "%s", names; exit }
    ($1 ~ /^ok *$/ || $1 == "FAIL") && $2 != "" { names = "" }' "$1" | sort -u
}

# package_dir IMPORTPATH: the package's directory in the tree (go.work: staging modules live in
# staging/src). Fails for a package that is not in the tree.
package_dir() {
  local dir
  case $1 in
    k8s.io/kubernetes) dir=. ;;
    k8s.io/kubernetes/*) dir=${1#k8s.io/kubernetes/} ;;
    k8s.io/*) dir=staging/src/$1 ;;
    *) return 1 ;;
  esac
  [[ -d ${KUBE_TREE}/${dir} ]] || return 1
  echo "${dir}"
}

# our_package_dirs: the directories of the packages that the series adds or changes anything in:
# its tests, its code or its testdata (a file under testdata/ counts for the package above it).
# The commits on top of the base, and uncommitted and untracked files, since this script tests
# the tree as it is.
our_package_dirs() {
  local f
  {
    git -C "${KUBE_TREE}" diff --name-only "${BASE_TAG}" HEAD &&
      git -C "${KUBE_TREE}" diff --name-only "${BASE_TAG}" &&
      git -C "${KUBE_TREE}" ls-files --others --exclude-standard
  } | while IFS= read -r f; do
    case ${f} in
      testdata/*) echo . ;;
      */testdata/*) echo "${f%%/testdata/*}" ;;
      */*) echo "${f%/*}" ;;
      *) echo . ;;
    esac
  done | sort -u
}

# unit_retryable PACKAGE: 0 when a failure of PACKAGE may be an upstream flake worth a second
# attempt: it built, it is in the tree, and the series adds or changes nothing in it. Needs
# OUR_DIRS (an associative array keyed by our_package_dirs).
unit_retryable() {
  local dir
  [[ $1 != *" ["*"failed]" ]] || return 1
  dir=$(package_dir "$1") || return 1
  [[ -z ${OUR_DIRS[${dir}]:-} ]]
}

# upstream_test PACKAGE TEST: 0 when a failure of TEST may be an upstream flake worth a second
# attempt: TEST is defined in a file that upstream has, and the series changes no file of
# PACKAGE that upstream has (it may add its own). The test may still run code that the series
# changes, which is why it gets one more attempt and not two, and why the summary names it.
upstream_test() {
  local dir file
  dir=$(package_dir "$1") || return 1
  file=$(grep -l -E "^func $2\(" "${KUBE_TREE}/${dir}"/*_test.go 2>/dev/null | head -n 1) || true
  [[ -n ${file} ]] || return 1
  file=${file#"${KUBE_TREE}"/}
  git -C "${KUBE_TREE}" cat-file -e "${BASE_TAG}:${file}" 2>/dev/null || return 1
  git -C "${KUBE_TREE}" diff --quiet --diff-filter=MDRT "${BASE_TAG}" -- "${dir}"
}

# join_list ITEM...: "a, b, c".
join_list() { local out; printf -v out "%s, " "$@"; echo "${out%, }"; }

# flakes_retried NAME...: "2 upstream flakes retried: a, b", the part of a suite's summary that
# names the failures a second attempt passed.
flakes_retried() { echo "$# upstream flake$( (($# == 1)) || echo s) retried: $(join_list "$@")"; }

run_unit() {
  stage_chaos
  # make bench's P4 (hack/bench) builds against the tree: nothing else compiles its shim.
  log "unit tests: make bench's P4 builds against the tree"
  if ! build_p4 "${KUBE_TREE}" patched "${LOGS}/p4-patched.test" 2>"${LOGS}/p4-build.log"; then
    result[unit]="FAIL (make bench's P4 does not build against the tree; see ${LOGS#"${FORK_ROOT}"/}/p4-build.log)"
    return 1
  fi
  rm -f "${LOGS}/p4-patched.test"
  log "unit tests: ${#UNIT_PACKAGES[@]} package patterns"
  local status ok failed_pkgs=() retry=() blocking=() p retried
  set +e
  # shellcheck disable=SC2086
  go test ${GOTESTFLAGS:-} -count=1 "${UNIT_PACKAGES[@]}" 2>&1 | tee "${LOGS}/unit.log" | filter_output
  status=${PIPESTATUS[0]}
  set -e
  ok=$(grep -c '^ok ' "${LOGS}/unit.log" || true)
  mapfile -t failed_pkgs < <(failed_packages "${LOGS}/unit.log")
  local see="see ${LOGS#"${FORK_ROOT}"/}/unit.log"
  if ((status == 0 && ${#failed_pkgs[@]} == 0)); then
    result[unit]="ok (${ok} packages)"
    return 0
  fi
  if ((${#failed_pkgs[@]} == 0)); then
    # go test failed without naming a package (a bad pattern, a toolchain error): nothing to retry.
    result[unit]="FAIL (${ok} packages ok, go test exited with ${status}; ${see})"
    return 1
  fi
  declare -gA OUR_DIRS=()
  local d ours
  if ! ours=$(our_package_dirs); then
    log "unit: cannot tell which packages the series touches (git failed above): no retries"
    result[unit]="FAIL (${ok} packages ok, ${#failed_pkgs[@]} failed; ${see})"
    return 1
  fi
  while IFS= read -r d; do [[ -z ${d} ]] || OUR_DIRS[${d}]=1; done <<<"${ours}"
  for p in "${failed_pkgs[@]}"; do
    if unit_retryable "${p}"; then retry+=("${p}"); else blocking+=("${p}"); fi
  done
  if ((${#blocking[@]})); then
    # A package of ours (or one that did not build) failed: the run fails whatever a retry says.
    log "unit: not retrying (the series changes these, or they did not build): ${blocking[*]}"
    result[unit]="FAIL (${ok} packages ok, ${#failed_pkgs[@]} failed; ${see})"
    return 1
  fi
  # Only packages the series does not touch failed: give each one more attempt.
  local passed=() again=()
  for p in "${retry[@]}"; do
    log "unit: ${p} failed and holds nothing of ours: running it once more (upstream flake?)"
    set +e
    # shellcheck disable=SC2086
    go test ${GOTESTFLAGS:-} -count=1 "${p}" 2>&1 | tee -a "${LOGS}/unit-retry.log" | filter_output
    status=${PIPESTATUS[0]}
    set -e
    if ((status == 0)); then passed+=("${p}"); else again+=("${p}"); fi
  done
  retried=$(flakes_retried "${passed[@]}")
  if ((${#again[@]})); then
    result[unit]="FAIL ($((ok + ${#passed[@]})) packages ok, ${#again[@]} failed twice: $(join_list "${again[@]}")"
    ((${#passed[@]} == 0)) || result[unit]+="; ${retried}"
    result[unit]+="; ${see}, unit-retry.log)"
    return 1
  fi
  result[unit]="ok ($((ok + ${#passed[@]})) packages, ${retried})"
}

run_integration() {
  "${FORK_ROOT}/hack/install-etcd.sh"
  local status failed_pkgs=() p t tests=() retry=() blocking=()
  log "integration: ${INTEGRATION[*]} (${INTEGRATION_PARALLEL:-3} at a time)"
  set +e
  integration_go_test -p "${INTEGRATION_PARALLEL:-3}" "${INTEGRATION[@]}" 2>&1 |
    tee "${LOGS}/integration.log" | filter_output
  status=${PIPESTATUS[0]}
  set -e
  mapfile -t failed_pkgs < <(failed_packages "${LOGS}/integration.log")
  local see="see ${LOGS#"${FORK_ROOT}"/}/integration.log"
  if ((status == 0 && ${#failed_pkgs[@]} == 0)); then
    result[integration]="ok (${#INTEGRATION[@]} packages)"
    return 0
  fi
  result[integration]="FAIL (${#failed_pkgs[@]} of ${#INTEGRATION[@]} packages failed; ${see})"
  ((${#failed_pkgs[@]})) || return 1
  # Retry only when every failure is a test that upstream wrote, in a package where the series
  # only adds files: a package that failed without naming a test (a panic, a timeout, a build
  # error) or a test of ours fails the run.
  for p in "${failed_pkgs[@]}"; do
    mapfile -t tests < <(failed_tests "${LOGS}/integration.log" "${p}")
    ((${#tests[@]})) || blocking+=("${p}")
    for t in "${tests[@]}"; do
      if upstream_test "${p}" "${t}"; then retry+=("${p} ${t}"); else blocking+=("${p##*/} ${t}"); fi
    done
  done
  if ((${#blocking[@]})); then
    log "integration: not retrying (ours, or failed without naming a test): $(join_list "${blocking[@]}")"
    return 1
  fi
  local again=() passed=()
  for p in "${retry[@]}"; do
    log "integration: ${p#* } in ${p%% *} is upstream's test: running it once more (upstream flake?)"
    set +e
    integration_go_test -run "^${p#* }\$" "${p%% *}" 2>&1 | tee -a "${LOGS}/integration-retry.log" | filter_output
    status=${PIPESTATUS[0]}
    set -e
    if ((status == 0)); then passed+=("${p#* }"); else again+=("${p#* }"); fi
  done
  local retried
  retried=$(flakes_retried "${passed[@]}")
  if ((${#again[@]})); then
    result[integration]="FAIL (${#again[@]} upstream test$( ((${#again[@]} == 1)) || echo s) failed twice: $(join_list "${again[@]}"); ${see}, integration-retry.log)"
    return 1
  fi
  result[integration]="ok (${#INTEGRATION[@]} packages, ${retried})"
}

# integration_go_test ARG...: go test of integration packages, with etcd on the PATH.
integration_go_test() {
  # shellcheck disable=SC2086
  PATH=${KUBE_TREE}/third_party/etcd:${PATH} KUBE_CACHE_MUTATION_DETECTOR=true KUBE_PANIC_WATCH_DECODE_ERROR=false \
    go test ${GOTESTFLAGS:-} -count=1 -timeout=30m "$@"
}

run_monitoring() {
  if ! "${FORK_ROOT}/hack/test-monitoring.sh" >"${LOGS}/monitoring.log" 2>&1; then
    result[monitoring]="FAIL (see ${LOGS#"${FORK_ROOT}"/}/monitoring.log)"
    return 1
  fi
  result[monitoring]="ok (alert rules and dashboard checked, promtool rule tests pass)"
}

run_e2e() {
  set +e
  "${FORK_ROOT}/hack/test-e2e.sh" 2>&1 | tee "${LOGS}/e2e.log" | grep --line-buffered -E '^\[|^error: |^Ran |SUCCESS|FAIL'
  local status=${PIPESTATUS[0]}
  set -e
  local ran
  ran=$(grep -oE '^Ran [0-9]+ of' "${LOGS}/e2e.log" | head -n 1 | grep -oE '[0-9]+' || echo 0)
  if ((status != 0)); then
    result[e2e]="FAIL (see ${LOGS#"${FORK_ROOT}"/}/e2e.log)"
    return 1
  fi
  local nodes="real node"
  if grep -q 'no real node in this cluster' "${LOGS}/e2e.log"; then nodes="fake nodes; file-reading specs skipped"; fi
  local why
  why=$(sed -n 's/.*no real node on this host (\(.*\)): fake nodes instead$/\1/p' "${LOGS}/e2e.log" | head -n 1)
  if [[ -n ${why} ]]; then nodes="fake nodes, ${why}; file-reading specs skipped"; fi
  local extra=''
  if grep -q 'rollout status: stock kubectl returns before' "${LOGS}/e2e.log"; then extra=', rollout status checked for 3 kinds'; fi
  result[e2e]="ok (${ran} specs, ${nodes}${extra})"
}

run_upgrade() {
  if [[ -f ${LOCAL_KUBECONFIG} ]] && "${FORK_BIN}/kubectl" --kubeconfig "${LOCAL_KUBECONFIG}" get --raw /readyz >/dev/null 2>&1; then
    result[upgrade]="skipped (it needs the local cluster for itself: make down, then make upgrade)"
    return 0
  fi
  set +e
  "${FORK_ROOT}/hack/upgrade.sh" 2>&1 | tee "${LOGS}/upgrade.log" | grep --line-buffered -E '^\[|^upgrade'
  local status=${PIPESTATUS[0]}
  set -e
  if ((status != 0)); then
    result[upgrade]="FAIL (see ${LOGS#"${FORK_ROOT}"/}/upgrade.log)"
    return 1
  fi
  result[upgrade]="ok (stock v1.37.1 -> patched -> stock -> patched)"
}

main() {
  local suites=("$@") start rc=0 s t
  local -A took
  ((${#suites[@]})) || suites=(monitoring unit integration e2e)
  mkdir -p "${LOGS}"
  start=$(date +%s)
  # 'make test' materializes and syncs the tree first (make tree); run directly, this script tests
  # the tree as it is, uncommitted edits included, and materializes it only when there is none.
  [[ -d ${KUBE_TREE}/.git ]] || "${FORK_ROOT}/hack/materialize.sh"
  cd "${KUBE_TREE}"
  rm -f "${LOGS}"/*.log
  for s in "${suites[@]}"; do
    t=$(date +%s)
    case ${s} in
      monitoring) run_monitoring || rc=1 ;;
      unit) run_unit || rc=1 ;;
      integration) run_integration || rc=1 ;;
      e2e) run_e2e || rc=1 ;;
      upgrade) run_upgrade || rc=1 ;;
      *) die "unknown suite ${s} (known: monitoring unit integration e2e upgrade)" ;;
    esac
    took[${s}]=$(duration $(($(date +%s) - t)))
  done
  local elapsed=$(($(date +%s) - start))
  local summary
  summary="make test: $([[ ${rc} == 0 ]] && echo PASS || echo FAIL) in $(duration "${elapsed}")"
  for s in "${suites[@]}"; do summary+=" | ${s} (${took[${s}]:-0s}): ${result[${s}]:-not run}"; done
  echo
  echo "${summary}"
  return "${rc}"
}

# Sourcing the script (as a test of its functions does) defines them without running anything.
if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  main "$@"
fi
