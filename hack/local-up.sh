#!/usr/bin/env bash
# make up: a local cluster of the patched release with fake nodes.
#
# kwokctl (pinned in go.mod) runs our own binaries (--runtime binary): etcd, the patched
# kube-apiserver, kube-controller-manager and kube-scheduler, and the kwok controller, which makes
# fake nodes Ready and pods Running/Ready without a container runtime. kwokctl also does the PKI,
# RBAC (--kube-authorization), process management by pid file, logs and teardown, so this script
# only chooses the flags. Nothing is downloaded.
#
# The gate WorkloadConfigSnapshot is on in every component, and the controllers run with their
# own service-account credentials, so the RBAC roles of the series are what they get.
#
# NODES=real (as root): instead of fake nodes, one real node, the patched kubelet with
# containerd, runc and the CNI bridge plugin from Debian's packages (hack/install-node.sh,
# hack/node-up.sh), so pods run and read their files. NODES=real+N adds N fake nodes beside it.
# FAKE_NODE_PODS (110, the kubelet's default) is how many pods a fake node takes: make bench
# raises it for its hundreds of workloads. ADMISSION_CONFIG: see below.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

LOCAL=${LOCAL_DIR}
CLUSTER=${LOCAL_CLUSTER}
NODES=${NODES:-3}
REAL_NODE=
case ${NODES} in
  real) REAL_NODE=1 FAKE_NODES=0 ;;
  real+*) REAL_NODE=1 FAKE_NODES=${NODES#real+} ;;
  *) FAKE_NODES=${NODES} ;;
esac
[[ ${FAKE_NODES} =~ ^[0-9]+$ ]] || die "NODES must be a number, real or real+N (got ${NODES})"
export KWOK_WORKDIR=${LOCAL}/kwok
KUBECONFIG_PATH=${LOCAL_KUBECONFIG}

"${FORK_ROOT}/hack/install-kwok.sh"
"${FORK_ROOT}/hack/install-etcd.sh"
extra_args=(--extra-args "kube-controller-manager=use-service-account-credentials=true")
if [[ -n ${REAL_NODE} ]]; then
  [[ ${EUID} -eq 0 ]] || die "NODES=real needs root (containerd, mounts, cgroups, network): run it from a root shell, or with 'sudo env PATH=\"\$PATH\" make up NODES=real' (sudo's own PATH may not hold Go)"
  "${FORK_ROOT}/hack/install-node.sh"
  "${FORK_ROOT}/hack/build.sh" kubelet
  "${FORK_ROOT}/hack/node-images.sh" build-if-missing
  source "${FORK_ROOT}/hack/lib/node.sh"
  build_crireset
  # The apiserver reaches the kubelet at its InternalIP, with the admin client certificate
  # (the kubelet authorizes it with a SubjectAccessReview).
  pki=${KWOK_WORKDIR}/clusters/${CLUSTER}/pki
  # kwok must leave the real node and its pods alone: by default kwokctl's kwok controller
  # manages every node (it would mark the real node's pods Running and Ready itself). Its fake
  # nodes carry the annotation kwok.x-k8s.io/node.
  # The order matters to kwokctl v0.8.0: the first extra arg of each component must stand at the
  # index of that component among the components named (it indexes its patches by the arg's
  # position), and a value may not contain "=".
  extra_args+=(--extra-args "kube-apiserver=kubelet-client-certificate=${pki}/admin.crt"
    --extra-args "kwok-controller=manage-all-nodes=false"
    --extra-args "kube-apiserver=kubelet-client-key=${pki}/admin.key"
    --extra-args "kube-apiserver=kubelet-preferred-address-types=InternalIP"
    --extra-args "kwok-controller=manage-nodes-with-annotation-selector=kwok.x-k8s.io/node")
fi
# ADMISSION_CONFIG: an AdmissionConfiguration file for kube-apiserver, such as one that adds the
# snapshot writer of an extension controller to ConfigSnapshotRestriction (make
# test-argo-rollouts-e2e writes one for Argo Rollouts). Appended last: with fake nodes only, it
# is kube-apiserver's first extra arg, at its index among the components named (see above).
if [[ -n ${ADMISSION_CONFIG:-} ]]; then
  [[ -f ${ADMISSION_CONFIG} ]] || die "ADMISSION_CONFIG=${ADMISSION_CONFIG}: no such file"
  extra_args+=(--extra-args "kube-apiserver=admission-control-config-file=$(realpath "${ADMISSION_CONFIG}")")
fi
KWOKCTL=${FORK_BIN}/kwokctl

if "${KWOKCTL}" get clusters 2>/dev/null | grep -qx "${CLUSTER}"; then
  if [[ -f ${KUBECONFIG_PATH} ]] && "${FORK_BIN}/kubectl" --kubeconfig "${KUBECONFIG_PATH}" get --raw /readyz >/dev/null 2>&1; then
    echo "The local cluster '${CLUSTER}' is already running (kubeconfig: ${KUBECONFIG_PATH#"${FORK_ROOT}"/}). 'make down' stops it."
    exit 0
  fi
  die "the local cluster '${CLUSTER}' exists but does not answer; run 'make down' first (logs: ${LOCAL#"${FORK_ROOT}"/}/logs)"
fi

mkdir -p "${LOCAL}"
# kwokctl's own output (JSON log lines) goes to up.log; the last lines are shown if it fails.
up_log=${LOCAL}/up.log
: >"${up_log}"
kwokctl_logged() {
  "${KWOKCTL}" "$@" >>"${up_log}" 2>&1 || { tail -n 20 "${up_log}" >&2; die "kwokctl $1 failed: see ${up_log#"${FORK_ROOT}"/}"; }
}
log "starting cluster '${CLUSTER}' ($(cat "${FORK_BIN}/VERSION" 2>/dev/null || echo unknown version)); kwokctl's log: ${up_log#"${FORK_ROOT}"/}"
# STOCK=1 (make upgrade): the control plane runs stock v1.37.1 kube-apiserver and
# kube-controller-manager (hack/build-stock-kubectl.sh), which know no WorkloadConfigSnapshot gate.
control_plane=${FORK_BIN}
gates=(--kube-feature-gates "WorkloadConfigSnapshot=true")
if [[ -n ${STOCK:-} ]]; then
  control_plane=${FORK_BIN}/stock
  gates=()
fi
kwokctl_logged create cluster --name "${CLUSTER}" --runtime binary \
  --etcd-binary "${FORK_BIN}/etcd" \
  --kube-apiserver-binary "${control_plane}/kube-apiserver" \
  --kube-controller-manager-binary "${control_plane}/kube-controller-manager" \
  --kube-scheduler-binary "${FORK_BIN}/kube-scheduler" \
  --kwok-controller-binary "${FORK_BIN}/kwok" \
  --kube-authorization \
  "${gates[@]}" \
  "${extra_args[@]}" \
  --kubeconfig "${KUBECONFIG_PATH}" \
  --wait 2m
ln -sfn "${KWOK_WORKDIR}/clusters/${CLUSTER}/logs" "${LOCAL}/logs"
if ((FAKE_NODES > 0)); then
  kwokctl_logged --name "${CLUSTER}" scale node --replicas "${FAKE_NODES}" --param ".allocatable.pods=${FAKE_NODE_PODS:-110}"
fi
if [[ -n ${REAL_NODE} ]]; then
  "${FORK_ROOT}/hack/node-up.sh"
fi
"${FORK_BIN}/kubectl" --kubeconfig "${KUBECONFIG_PATH}" wait --for=condition=Ready node --all --timeout=60s >/dev/null
nodes="${FAKE_NODES} fake nodes"
[[ -z ${REAL_NODE} ]] || nodes="the real node ${NODE_NAME} (kubelet + containerd) and ${nodes}"

cat <<MSG

The local cluster '${CLUSTER}' is ready: ${nodes}, WorkloadConfigSnapshot on.

From this directory:

  export KUBECONFIG=\$PWD/${KUBECONFIG_PATH#"${FORK_ROOT}"/} PATH=\$PWD/${FORK_BIN#"${FORK_ROOT}"/}:\$PATH
  kubectl get nodes
  make demo    # the user story, step by step

Logs: ${LOCAL#"${FORK_ROOT}"/}/logs    Stop: make down
MSG
