#!/usr/bin/env bash
# The real node of 'make up NODES=real': containerd (Debian's, with runc and the CNI plugins) and
# the patched kubelet, joined to the running local cluster. hack/local-up.sh calls it; so can you,
# on a cluster that 'make up' started. hack/node-down.sh undoes everything it does.
#
# Everything lives under _output/local/node: containerd's root, state and socket, the kubelet's
# root dir and pod logs, the CNI configuration and IP allocations, the credentials, the logs and
# the pid files. What cannot live there is recorded in host-state before it changes, so that
# hack/node-down.sh puts it back:
#   - the CNI bridge: the host reaches the pods through it, and its address, the pods' gateway,
#     is the node IP (the apiserver reaches the kubelet there, on this host);
#   - the sysctls that the kubelet (vm.overcommit_memory, kernel.panic, kernel.panic_on_oops)
#     and the bridge plugin (net.ipv4.ip_forward) set;
#   - the iptables chains that the kubelet adds (KUBE-FIREWALL, KUBE-KUBELET-CANARY, ...);
#   - the cgroups of the pods (kubepods) and /var/log/containers.
#
# This machine has no registry: the images are built locally (hack/node-images.sh). It has
# cgroup v1 (failCgroupV1: false) and lacks CAP_SYS_RESOURCE, so containerd must not give the
# sandboxes a negative oom_score_adj (restrict_oom_score_adj).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
source "${FORK_ROOT}/hack/lib/node.sh"

[[ ${EUID} -eq 0 ]] || die "a real node needs root (containerd, mounts, cgroups, network): run 'sudo make up NODES=real'"
if ! [[ -f ${LOCAL_KUBECONFIG} ]] || ! kubectl_local get --raw /readyz >/dev/null 2>&1; then
  die "no local cluster answers at ${LOCAL_KUBECONFIG#"${FORK_ROOT}"/}: run 'make up NODES=real'"
fi
[[ ! -f ${NODE_DIR}/kubelet.pid ]] || die "a real node already runs (${NODE_DIR#"${FORK_ROOT}"/}); 'make down' stops it"
for bin in containerd runc ctr iptables "${CNI_BIN_DIR}/bridge" "${CNI_BIN_DIR}/host-local" "${CNI_BIN_DIR}/loopback" "${FORK_BIN}/kubelet"; do
  command -v "${bin}" >/dev/null || die "missing ${bin}: run hack/install-node.sh"
done
[[ -f ${CLUSTER_PKI}/ca.crt && -f ${CLUSTER_PKI}/ca.key ]] || die "no cluster CA in ${CLUSTER_PKI}"

mkdir -p "${NODE_DIR}"/{containerd,cni,cni-ipam,kubelet,pod-logs,logs}
ln -sfn "${NODE_DIR}/logs" "${LOCAL_DIR}/node-logs"

record_host_state

log "node network: node IP ${NODE_IP}, pods ${POD_SUBNET} on bridge ${POD_BRIDGE}"
pod_network
start_containerd "$(image_ref pause)"

log "importing the node's images"
CONTAINERD_ADDRESS=${CONTAINERD_ADDRESS} "${FORK_ROOT}/hack/node-images.sh" import

log "kubelet credentials for system:node:${NODE_NAME}"
openssl req -new -newkey rsa:2048 -nodes -keyout "${NODE_DIR}/kubelet.key" -subj "/O=system:nodes/CN=system:node:${NODE_NAME}" \
  -out "${NODE_DIR}/kubelet.csr" 2>/dev/null
openssl x509 -req -in "${NODE_DIR}/kubelet.csr" -CA "${CLUSTER_PKI}/ca.crt" -CAkey "${CLUSTER_PKI}/ca.key" -CAcreateserial \
  -CAserial "${NODE_DIR}/kubelet.srl" -days 30 -out "${NODE_DIR}/kubelet.crt" 2>/dev/null
server=$(kubectl_local config view --minify -o jsonpath='{.clusters[0].cluster.server}')
cat >"${NODE_DIR}/kubelet.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: ${server}
    certificate-authority: ${CLUSTER_PKI}/ca.crt
users:
- name: kubelet
  user:
    client-certificate: ${NODE_DIR}/kubelet.crt
    client-key: ${NODE_DIR}/kubelet.key
contexts:
- name: local
  context:
    cluster: local
    user: kubelet
current-context: local
EOF

cat >"${NODE_DIR}/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: ${NODE_IP}
port: ${KUBELET_PORT}
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: ${KUBELET_HEALTHZ_PORT}
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
  x509:
    clientCAFile: ${CLUSTER_PKI}/ca.crt
authorization:
  mode: Webhook
containerRuntimeEndpoint: unix://${CONTAINERD_ADDRESS}
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
podLogsDir: ${NODE_DIR}/pod-logs
# The images cannot be pulled again: never collect them, and do not evict on a busy disk.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  memory.available: 100Mi
  nodefs.available: 1%
  imagefs.available: 1%
serializeImagePulls: false
EOF
log "starting the kubelet ($(cat "${FORK_BIN}/VERSION" 2>/dev/null || echo unknown version)) as node ${NODE_NAME}"
"${FORK_BIN}/kubelet" --config="${NODE_DIR}/kubelet.yaml" --kubeconfig="${NODE_DIR}/kubelet.kubeconfig" \
  --root-dir="${NODE_DIR}/kubelet" --cert-dir="${NODE_DIR}/kubelet/pki" \
  --hostname-override="${NODE_NAME}" --node-ip="${NODE_IP}" \
  --feature-gates=WorkloadConfigSnapshot=true --v=2 >"${NODE_DIR}/logs/kubelet.log" 2>&1 &
echo $! >"${NODE_DIR}/kubelet.pid"
kubelet_registered() {
  kill -0 "$(cat "${NODE_DIR}/kubelet.pid")" || die "the kubelet exited; see ${NODE_DIR}/logs/kubelet.log"
  kubectl_local get node "${NODE_NAME}"
}
wait_for 60 "node ${NODE_NAME} to register" kubelet_registered
kubectl_local wait --for=condition=Ready node "${NODE_NAME}" --timeout=120s >/dev/null ||
  die "node ${NODE_NAME} is not Ready; see ${NODE_DIR}/logs/kubelet.log"
log "node ${NODE_NAME} is Ready"
