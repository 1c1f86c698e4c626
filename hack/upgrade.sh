#!/usr/bin/env bash
# make upgrade: a real upgrade and downgrade. Starts the local cluster with stock v1.37.1
# kube-apiserver and kube-controller-manager (built from the tree's pristine base commit), then
# the chaos program in its -upgrade mode (hack/chaos/upgrade.go, built in the tree) swaps them for
# the patched ones with the gate on and back, and checks at each step what the workloads do (see
# docs/design.md, "Upgrade and downgrade"); last, a downgrade to the previous release's binaries
# (hack/build-previous.sh) and the upgrade from them, which roll nothing. Needs no running local
# cluster; stops the one it starts.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

export KUBECONFIG=${LOCAL_KUBECONFIG}
if [[ -f ${KUBECONFIG} ]] && "${FORK_BIN}/kubectl" get --raw /readyz >/dev/null 2>&1; then
  die "a local cluster is running: 'make down' first (make upgrade starts one with stock binaries)"
fi
"${FORK_ROOT}/hack/build.sh"
"${FORK_ROOT}/hack/build-stock-kubectl.sh" kubectl kube-apiserver kube-controller-manager
previous=$("${FORK_ROOT}/hack/build-previous.sh")
build_chaos

STOCK=1 NODES=${NODES:-2} "${FORK_ROOT}/hack/local-up.sh"
# shellcheck disable=SC2317 # called by the trap
cleanup() { "${FORK_ROOT}/hack/local-down.sh"; }
trap cleanup EXIT
"${FORK_BIN}/chaos" -upgrade -kubeconfig "${KUBECONFIG}" \
  -kcm-pid-file "${LOCAL_DIR}/kwok/clusters/${LOCAL_CLUSTER}/pids/kube-controller-manager.pid" \
  -stock "${FORK_BIN}/stock" -patched "${FORK_BIN}" -previous "${previous}" -kubectl "${FORK_BIN}/stock/kubectl" "$@"
