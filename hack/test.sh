#!/usr/bin/env bash
# The fork's test suite (README: make test; CI: .ci/run).
#
#   unit         the unit tests of every package the series touches, plus the upstream suites
#                that guard the API (round trip, validation, registry, features, RBAC, k8s.io/api)
#   integration  test/integration with a real kube-apiserver and etcd (from hack/install-etcd.sh)
#   e2e          the ConfigSnapshot e2e tests (upstream's framework) against the local cluster of
#                'make up' (started for the run, and stopped, unless one is running already)
#
# hack/test.sh [unit] [integration] [e2e]   (all by default). Logs go to _output/test-logs/.
# Extra flags for go test: GOTESTFLAGS (e.g. GOTESTFLAGS=-v).
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
  ./plugin/pkg/auth/authorizer/rbac/bootstrappolicy/...
  ./staging/src/k8s.io/api/...
  ./staging/src/k8s.io/client-go/applyconfigurations/...
  # Snapshots in the controllers, and upstream's suites of what they touch.
  ./staging/src/k8s.io/component-helpers/apps/configsnapshot/...
  ./pkg/controller/configsnapshot/...
  ./pkg/controller/deployment/...
  ./pkg/controller/replicaset/...
  ./cmd/kube-controller-manager/app/...
  ./staging/src/k8s.io/kubectl/pkg/polymorphichelpers/...
  ./staging/src/k8s.io/kubectl/pkg/describe/...
  ./staging/src/k8s.io/kubectl/pkg/util/...
)
# Integration tests: package and -run pattern ("." for all): upstream's Deployment tests and ours
# (config_snapshot*_test.go: the API, and every DESIGN.md point for Deployments).
INTEGRATION=(
  "./test/integration/deployment ."
)

suites=("$@")
((${#suites[@]})) || suites=(unit integration e2e)
LOGS=${FORK_OUTPUT}/test-logs
mkdir -p "${LOGS}"
start=$(date +%s)
declare -A result

# 'make test' materializes and syncs the tree first (make tree); run directly, this script tests
# the tree as it is, uncommitted edits included, and materializes it only when there is none.
[[ -d ${KUBE_TREE}/.git ]] || "${FORK_ROOT}/hack/materialize.sh"
cd "${KUBE_TREE}"

# filter_output: the lines of go test output a person wants to see scroll by.
filter_output() { grep -E '^(ok|FAIL|--- FAIL|panic:)|\[build failed\]|cannot|undefined' || true; }

run_unit() {
  log "unit tests: ${#UNIT_PACKAGES[@]} package patterns"
  local status ok fails
  set +e
  # shellcheck disable=SC2086
  go test ${GOTESTFLAGS:-} -count=1 "${UNIT_PACKAGES[@]}" 2>&1 | tee "${LOGS}/unit.log" | filter_output
  status=${PIPESTATUS[0]}
  set -e
  ok=$(grep -c '^ok ' "${LOGS}/unit.log" || true)
  fails=$(grep -cE '^FAIL[[:space:]]' "${LOGS}/unit.log" || true)
  if ((status != 0 || fails > 0)); then
    result[unit]="FAIL (${ok} packages ok, ${fails} failed; see ${LOGS#"${FORK_ROOT}"/}/unit.log)"
    return 1
  fi
  result[unit]="ok (${ok} packages)"
}

run_integration() {
  "${FORK_ROOT}/hack/install-etcd.sh"
  local entry pkg pattern failed=0 n=0
  for entry in "${INTEGRATION[@]}"; do
    read -r pkg pattern <<<"${entry}"
    n=$((n + 1))
    log "integration: ${pkg} -run ${pattern}"
    set +e
    # shellcheck disable=SC2086
    PATH=${KUBE_TREE}/third_party/etcd:${PATH} KUBE_CACHE_MUTATION_DETECTOR=true KUBE_PANIC_WATCH_DECODE_ERROR=false \
      go test ${GOTESTFLAGS:-} -count=1 -timeout=30m "${pkg}" -run "${pattern}" 2>&1 | tee -a "${LOGS}/integration.log" | filter_output
    if ((PIPESTATUS[0] != 0)); then failed=$((failed + 1)); fi
    set -e
  done
  if ((failed)); then
    result[integration]="FAIL (${failed} of ${n} failed; see ${LOGS#"${FORK_ROOT}"/}/integration.log)"
    return 1
  fi
  result[integration]="ok (${n} package runs)"
}

run_e2e() {
  set +e
  "${FORK_ROOT}/hack/test-e2e.sh" 2>&1 | tee "${LOGS}/e2e.log" | grep -E '^\[|^Ran |SUCCESS|FAIL'
  local status=${PIPESTATUS[0]}
  set -e
  local ran
  ran=$(grep -oE '^Ran [0-9]+ of' "${LOGS}/e2e.log" | head -n 1 | grep -oE '[0-9]+' || echo 0)
  if ((status != 0)); then
    result[e2e]="FAIL (see ${LOGS#"${FORK_ROOT}"/}/e2e.log)"
    return 1
  fi
  result[e2e]="ok (${ran} specs)"
}

rc=0
rm -f "${LOGS}"/*.log
for s in "${suites[@]}"; do
  case ${s} in
    unit) run_unit || rc=1 ;;
    integration) run_integration || rc=1 ;;
    e2e) run_e2e || rc=1 ;;
    *) die "unknown suite ${s} (known: unit integration e2e)" ;;
  esac
done
elapsed=$(($(date +%s) - start))
summary="make test: $([[ ${rc} == 0 ]] && echo PASS || echo FAIL) in $((elapsed / 60))m$((elapsed % 60))s"
for s in "${suites[@]}"; do summary+=" | ${s}: ${result[${s}]:-not run}"; done
echo
echo "${summary}"
exit "${rc}"
