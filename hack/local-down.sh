#!/usr/bin/env bash
# make down: stop the local cluster of 'make up'. kwokctl stops the processes it started, by the
# pids it recorded, and removes the cluster's files; nothing else is touched. A real node
# (NODES=real) is stopped first by hack/node-down.sh, which restores what it changed on the host.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
CLUSTER=${LOCAL_CLUSTER}
export KWOK_WORKDIR=${LOCAL_DIR}/kwok
# The real node first, while the cluster is still there; it needs no control plane to stop.
if [[ -d ${LOCAL_DIR}/node ]]; then
  "${FORK_ROOT}/hack/node-down.sh"
fi
if [[ ! -x ${FORK_BIN}/kwokctl ]] || ! "${FORK_BIN}/kwokctl" get clusters 2>/dev/null | grep -qx "${CLUSTER}"; then
  echo "No local cluster '${CLUSTER}' is running."
  exit 0
fi
# kwokctl's own output (JSON log lines) goes to down.log, shown if it fails.
down_log=${LOCAL_DIR}/down.log
"${FORK_BIN}/kwokctl" delete cluster --name "${CLUSTER}" --kubeconfig "${LOCAL_KUBECONFIG}" >"${down_log}" 2>&1 ||
  { cat "${down_log}" >&2; die "kwokctl delete cluster failed"; }
rm -f "${LOCAL_DIR}/logs"
echo "Stopped the local cluster '${CLUSTER}'."
