#!/usr/bin/env bash
# make test-kind: the kind node image end to end: make kind-image, make kind-up, `kubectl version`
# and the gate in every component checked, the ConfigSnapshot e2e tests against the kind cluster
# (E2E_CLUSTER=kind: every node is real, so the specs that read files and exec into pods run), and
# make kind-down (also when something failed, unless KIND_KEEP=1).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
source "${FORK_ROOT}/hack/lib/kind.sh"

# shellcheck disable=SC2317 # called by the trap
cleanup() { [[ -n ${KIND_KEEP:-} ]] || "${FORK_ROOT}/hack/kind-down.sh"; }
trap cleanup EXIT
start=${SECONDS}
"${FORK_ROOT}/hack/kind-image.sh"
log "make kind-image: $((SECONDS - start)) s"
start=${SECONDS}
"${FORK_ROOT}/hack/kind-up.sh"
log "make kind-up: $((SECONDS - start)) s"
export KUBECONFIG=${KIND_KUBECONFIG}
kubectl=${FORK_BIN}/kubectl
want=$(cat "${FORK_BIN}/VERSION")
got=$("${kubectl}" version -o json | jq -r .serverVersion.gitVersion)
[[ ${got} == "${want}" ]] || die "the kind cluster's API server is ${got}, not ${want}"
log "server version ${got}"
# The gate in every component: on the command lines of the static pods and of kube-proxy, and in
# every kubelet's configuration.
for c in kube-apiserver kube-controller-manager kube-scheduler; do
  "${kubectl}" -n kube-system get pods -l component="${c}" -o jsonpath='{.items[*].spec.containers[0].command}' |
    grep -q 'WorkloadConfigSnapshot=true' || die "${c} runs without --feature-gates=WorkloadConfigSnapshot=true"
done
"${kubectl}" -n kube-system get configmap kube-proxy -o jsonpath='{.data.config\.conf}' | grep -q 'WorkloadConfigSnapshot: true' ||
  die "kube-proxy's configuration does not turn WorkloadConfigSnapshot on"
for node in $("${kubectl}" get nodes -o name); do
  "${kubectl}" get --raw "/api/v1/nodes/${node#node/}/proxy/configz" | jq -e '.kubeletconfig.featureGates.WorkloadConfigSnapshot == true' >/dev/null ||
    die "the kubelet of ${node} runs without WorkloadConfigSnapshot"
done
log "WorkloadConfigSnapshot is on in kube-apiserver, kube-controller-manager, kube-scheduler, kube-proxy and every kubelet"
start=${SECONDS}
E2E_CLUSTER=kind "${FORK_ROOT}/hack/test-e2e.sh"
log "ConfigSnapshot e2e against kind: $((SECONDS - start)) s"
