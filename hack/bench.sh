#!/usr/bin/env bash
# make bench: what the patched kube-controller-manager (gate on) costs against stock v1.37.1, side
# by side on one local cluster with fake nodes: the patched kube-apiserver with the gate on, the
# same etcd and the same data; the chaos program in its -bench mode (hack/chaos/bench.go) swaps the
# controller manager between the stock binary (built from the tree's pristine base commit) and the
# patched one, and runs the same scenarios in a fresh namespace for each. It prints one table and
# writes it to _output/bench/bench.{json,md}. Needs no running local cluster; stops the one it
# starts.
#
#   BENCH_SCALE=small   (default) 1,000 Secrets + 1,000 ConfigMaps of 12 KiB, 20 workloads of each
#                       kind, 100 Deployments sharing one watched ConfigMap: about 6 minutes
#   BENCH_SCALE=full    10,000 + 10,000, 100 of each kind, 500 Deployments
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

export KUBECONFIG=${LOCAL_KUBECONFIG}
if [[ -f ${KUBECONFIG} ]] && "${FORK_BIN}/kubectl" get --raw /readyz >/dev/null 2>&1; then
  die "a local cluster is running: 'make down' first (make bench starts its own)"
fi
case ${BENCH_SCALE:=small} in
  small) scale=(-bench-objects 1000 -bench-workloads 20 -bench-fanout 100) ;;
  full) scale=(-bench-objects 10000 -bench-workloads 100 -bench-fanout 500) ;;
  *) die "BENCH_SCALE is small or full, not ${BENCH_SCALE}" ;;
esac
"${FORK_ROOT}/hack/build.sh"
"${FORK_ROOT}/hack/build-stock-kubectl.sh" kube-controller-manager
build_chaos

NODES=${NODES:-2} "${FORK_ROOT}/hack/local-up.sh"
# shellcheck disable=SC2317 # called by the trap
cleanup() { "${FORK_ROOT}/hack/local-down.sh"; }
trap cleanup EXIT
read -r host cert key < <(kcm_metric_endpoint)
log "bench (BENCH_SCALE=${BENCH_SCALE}): stock, then patched kube-controller-manager"
"${FORK_BIN}/chaos" -bench -kubeconfig "${KUBECONFIG}" \
  -kcm-pid-file "${LOCAL_DIR}/kwok/clusters/${LOCAL_CLUSTER}/pids/kube-controller-manager.pid" \
  -stock "${FORK_BIN}/stock" -patched "${FORK_BIN}" -kubectl "${FORK_BIN}/kubectl" \
  -kcm-metrics "https://${host}/metrics" -kcm-cert "${cert}" -kcm-key "${key}" -bench-out "${FORK_OUTPUT}/bench" "${scale[@]}" "$@"
