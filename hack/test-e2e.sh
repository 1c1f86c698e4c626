#!/usr/bin/env bash
# make test-e2e / make test-upstream-e2e: upstream's e2e framework against the local cluster.
#
#   hack/test-e2e.sh            the ConfigSnapshot tests ([sig-apps] ConfigSnapshot), then
#                               hack/e2e/rollout-status.sh (this release's kubectl rollout status)
#   hack/test-e2e.sh upstream   upstream's [sig-apps] Deployment, ReplicaSet, DaemonSet,
#                               StatefulSet and ControllerRevision tests, [sig-cli] Kubectl
#                               rollout and [sig-api-machinery] Garbage collector, minus the
#                               explicit skip lists in hack/e2e (E2E_FOCUS chooses others)
#
# E2E_CLUSTER=kind runs them against the cluster of 'make kind-up' (every node real). Else it
# uses the cluster of 'make up' when one runs; otherwise starts one and stops it afterwards:
# with a real node (NODES=real) when this runs as root on a Debian system, else with fake nodes
# (E2E_NODES sets the NODES of that cluster). On a cluster with fake nodes the tests that need
# pods to run are skipped: "pods reading the files" of ConfigSnapshot, and the upstream tests
# listed in hack/e2e/upstream-skips-fake-nodes.txt.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

SUITE=${1:-snapshot}
REPORT=${FORK_OUTPUT}/e2e-report/${SUITE}
E2E=${FORK_BIN}/e2e.test
export KUBECONFIG=${LOCAL_KUBECONFIG}
if [[ ${E2E_CLUSTER:-local} == kind ]]; then
  source "${FORK_ROOT}/hack/lib/kind.sh"
  KUBECONFIG=${KIND_KUBECONFIG}
  REPORT=${FORK_OUTPUT}/e2e-report/kind-${SUITE}
fi

[[ -d ${KUBE_TREE}/.git ]] || "${FORK_ROOT}/hack/materialize.sh"
# The test main lives in this repository; it is placed in the tree, excluded from git there.
mkdir -p "${KUBE_TREE}/test/e2e_fork"
cp "${FORK_ROOT}/hack/e2e/e2e_test.go" "${KUBE_TREE}/test/e2e_fork/e2e_test.go"
grep -qx '/test/e2e_fork/' "${KUBE_TREE}/.git/info/exclude" 2>/dev/null || echo '/test/e2e_fork/' >>"${KUBE_TREE}/.git/info/exclude"
log "building the e2e binary (SIG Apps, kubectl and API machinery tests)"
(cd "${KUBE_TREE}" && go test -c -o "${E2E}" ./test/e2e_fork)

# The user-visible flows run with an unpatched kubectl (see hack/build-stock-kubectl.sh).
"${FORK_ROOT}/hack/build-stock-kubectl.sh"

started=
if [[ ${E2E_CLUSTER:-local} == kind ]]; then
  "${FORK_BIN}/kubectl" get --raw /readyz >/dev/null || die "no kind cluster answers: make kind-up first"
elif ! [[ -f ${KUBECONFIG} ]] || ! "${FORK_BIN}/kubectl" get --raw /readyz >/dev/null 2>&1; then
  nodes=${E2E_NODES:-}
  if [[ -z ${nodes} ]]; then
    nodes=3
    if [[ ${EUID} -eq 0 ]] && command -v dpkg-query >/dev/null; then
      nodes=real
      source "${FORK_ROOT}/hack/lib/node.sh"
      reason=$(real_node_unavailable)
      if [[ -n ${reason} ]]; then
        log "no real node on this host (${reason}): fake nodes instead"
        nodes=3
      fi
    fi
  fi
  "${FORK_ROOT}/hack/build.sh"
  NODES=${nodes} "${FORK_ROOT}/hack/local-up.sh"
  started=1
fi
# Pods run for real only if every node is real: with NODES=real+N some land on fake nodes.
real_node=
fake_nodes=$("${FORK_BIN}/kubectl" get nodes -o jsonpath='{.items[*].metadata.annotations.kwok\.x-k8s\.io/node}')
if [[ -f ${LOCAL_DIR}/node/kubelet.pid && -z ${fake_nodes} ]]; then real_node=1; fi
if [[ ${E2E_CLUSTER:-local} == kind ]]; then real_node=1; fi
# shellcheck disable=SC2317 # called by the trap
cleanup() { if [[ -n ${started} ]]; then "${FORK_ROOT}/hack/local-down.sh"; fi; }
trap cleanup EXIT

args=(--kubeconfig="${KUBECONFIG}" --provider=skeleton --kubectl-path="${FORK_BIN}/stock/kubectl"
  --report-dir="${REPORT}" --ginkgo.no-color --ginkgo.timeout=50m)
case ${SUITE} in
  snapshot)
    focus='\[sig-apps\] ConfigSnapshot'
    skip='^$'
    if [[ -z ${real_node} ]]; then
      log "no real node in this cluster, or fake nodes too: skipping the tests that read files in pods (they run with 'make up NODES=real')"
      skip='ConfigSnapshot .*pods reading the files'
    fi
    ;;
  upstream)
    focus=${E2E_FOCUS:-'\[sig-apps\] (Deployment|ReplicaSet|Daemon set|DaemonSet|StatefulSet|ControllerRevision)|\[sig-cli\] Kubectl rollout|\[sig-api-machinery\] Garbage collector'}
    # One regular expression per line of the skip lists, comments and blank lines ignored.
    lists=("${FORK_ROOT}/hack/e2e/upstream-skips.txt")
    [[ -n ${real_node} ]] || lists+=("${FORK_ROOT}/hack/e2e/upstream-skips-fake-nodes.txt")
    skip=$(sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e '/^$/d' "${lists[@]}" | paste -sd'|')
    # Also skipped, as in upstream's default jobs: tests of alpha features, whose gates are off in
    # this cluster (only WorkloadConfigSnapshot is on).
    # [Serial] tests run too (this runner is serial; the DaemonSet and ControllerRevision tests are
    # all [Serial]).
    skip="\[Disruptive\]|\[Slow\]|\[Flaky\]|\[Feature:OffByDefault\]${skip:+|${skip}}"
    ;;
  *) die "unknown suite ${SUITE} (snapshot or upstream)" ;;
esac
mkdir -p "${REPORT}"
log "running e2e: focus ${focus}"
set +e
"${E2E}" "${args[@]}" --ginkgo.focus="${focus}" --ginkgo.skip="${skip}" 2>&1 | tee "${REPORT}/e2e.log" |
  grep -E '^\s*(•|\[FAIL\]|Ran [0-9]+|PASS|FAIL|SUCCESS!|Summarizing)|^(Ran|FAIL|PASS|ok)' 
status=${PIPESTATUS[0]}
set -e
grep -E '^Ran [0-9]+ of [0-9]+ Specs|^(SUCCESS|FAIL)! --' "${REPORT}/e2e.log" || true
if [[ ${SUITE} == snapshot ]]; then
  # This release's kubectl, which the specs above do not use: rollout status after a watched edit.
  "${FORK_ROOT}/hack/e2e/rollout-status.sh" 2>&1 | tee -a "${REPORT}/e2e.log" || status=1
fi
exit "${status}"
