#!/usr/bin/env bash
# Stop the real node of 'make up NODES=real' and undo what hack/node-up.sh did to the host:
#   1. stop the kubelet (by its pid);
#   2. stop and remove every pod sandbox through containerd's CRI (crireset, built from the
#      tree): containers stop, the CNI plugin releases the pod IPs and the network namespaces;
#   3. stop containerd (by its pid); the shims exit with their containers;
#   4. unmount what is still mounted under _output/local/node (the kubelet's volumes of pods it
#      did not tear down, containerd's snapshots);
#   5. restore the sysctls, iptables chains, cgroups, interfaces and /var/log/containers as
#      hack/node-up.sh recorded them (hack/lib/node.sh).
# hack/local-down.sh calls it before it stops the control plane.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
source "${FORK_ROOT}/hack/lib/node.sh"

[[ -d ${NODE_DIR} ]] || { echo "No real node is running."; exit 0; }
[[ ${EUID} -eq 0 ]] || die "stopping the real node needs root: run 'sudo make down'"

# stop_pid NAME: TERM the process of NAME.pid, wait up to 30s, then KILL it.
stop_pid() {
  local file=${NODE_DIR}/$1.pid pid i
  [[ -f ${file} ]] || return 0
  pid=$(cat "${file}")
  if kill -0 "${pid}" 2>/dev/null; then
    kill -TERM "${pid}" 2>/dev/null || true
    for ((i = 0; i < 30; i++)); do
      kill -0 "${pid}" 2>/dev/null || break
      sleep 1
    done
    if kill -0 "${pid}" 2>/dev/null; then
      log "$1 (pid ${pid}) did not stop in 30s: killing it"
      kill -KILL "${pid}" 2>/dev/null || true
    fi
  fi
  rm -f "${file}"
}

log "stopping the kubelet"
stop_pid kubelet
if [[ -S ${CONTAINERD_ADDRESS} ]] && ctr --address "${CONTAINERD_ADDRESS}" version >/dev/null 2>&1; then
  log "removing the node's pod sandboxes"
  crireset=${FORK_BIN}/crireset
  [[ -x ${crireset} ]] || build_crireset
  "${crireset}" --endpoint "unix://${CONTAINERD_ADDRESS}" || log "some sandboxes were not removed; killing their tasks"
  # Whatever the CRI did not remove (it should be nothing): kill the tasks, so the shims exit.
  for id in $(ctr --address "${CONTAINERD_ADDRESS}" -n k8s.io tasks ls -q 2>/dev/null); do
    ctr --address "${CONTAINERD_ADDRESS}" -n k8s.io tasks kill -s KILL "${id}" >/dev/null 2>&1 || true
    ctr --address "${CONTAINERD_ADDRESS}" -n k8s.io tasks delete -f "${id}" >/dev/null 2>&1 || true
  done
fi
log "stopping containerd"
stop_pid containerd

# Innermost first. findmnt prints one mount per line; paths with spaces are escaped (\x20).
{ findmnt -rn -o TARGET | grep -F "${NODE_DIR}/" || true; } | sort -r | while read -r target; do
  target=$(printf '%b' "${target}")
  umount "${target}" 2>/dev/null || umount -l "${target}" || log "could not unmount ${target}"
done
restore_host_state
if findmnt -rn -o TARGET | grep -qF "${NODE_DIR}/"; then
  die "mounts are left under ${NODE_DIR}; not removing it"
fi
rm -rf "${NODE_DIR}" "${LOCAL_DIR}/node-logs"
echo "Stopped the real node ${NODE_NAME}."
