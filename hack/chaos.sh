#!/usr/bin/env bash
# make chaos: kill kube-controller-manager of the local cluster (SIGKILL) at random moments
# and restart it, while the ConfigMaps that Deployments, DaemonSets and StatefulSets watch are
# edited; then check that every workload converges to the latest content, that no snapshot is
# leaked, lost or duplicated, and that a quiet restart makes no revision and replaces no pod
# (hack/chaos/main.go, built in the tree). Uses the running cluster of 'make up', or starts one
# with fake nodes and stops it afterwards. Arguments go to the chaos program (e.g. -edits 100
# -kills 10 -seed 1).
#
# make chaos-ha (-ha): the same on a highly available control plane, three kube-controller-managers
# with leader election and 4 s leases, 300 workloads on 3 sources; the leader is killed or paused
# past its lease, etcd restarted and kube-apiserver paused past the lease (hack/chaos/ha.go).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

export KUBECONFIG=${LOCAL_KUBECONFIG}
build_chaos

pid_dir=${LOCAL_DIR}/kwok/clusters/${LOCAL_CLUSTER}/pids
started=
if ! [[ -f ${KUBECONFIG} ]] || ! "${FORK_BIN}/kubectl" get --raw /readyz >/dev/null 2>&1; then
  "${FORK_ROOT}/hack/build.sh"
  NODES=${NODES:-3} FAKE_NODE_PODS=1000 "${FORK_ROOT}/hack/local-up.sh"
  started=1
fi
# shellcheck disable=SC2317 # called by the trap
cleanup() {
  # The replicas that -ha adds, if the chaos program could not stop them: by their pids.
  local f
  for f in "${pid_dir}"/kube-controller-manager-[0-9].pid; do
    [[ -f ${f} ]] || continue
    kill "$(cat "${f}")" 2>/dev/null || true
    rm -f "${f}"
  done
  if [[ -n ${started} ]]; then "${FORK_ROOT}/hack/local-down.sh"; fi
}
trap cleanup EXIT

pid_file=${pid_dir}/kube-controller-manager.pid
[[ -f ${pid_file} ]] || die "no pid file of kube-controller-manager at ${pid_file}"
"${FORK_BIN}/chaos" -kubeconfig "${KUBECONFIG}" -kcm-pid-file "${pid_file}" -kubectl "${FORK_BIN}/kubectl" "$@"
