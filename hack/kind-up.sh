#!/usr/bin/env bash
# make kind-up: a kind cluster (KIND_CLUSTER, default configsnapshot) from the node image of make
# kind-image, with kind/config.yaml (WorkloadConfigSnapshot on in every component; KIND_CONFIG to
# use another, e.g. kind/conformance.yaml), on the Docker
# engine that answers or one started for it (hack/lib/kind.sh). Loads the e2e test images (built
# here, hack/node-images.sh), waits until the nodes and the system pods are Ready, and prints how
# to use it. make kind-down removes it. KIND_STOCK=1: the cluster of stock components (make
# kind-image KIND_STOCK=1), from the same configuration without the gate, which they do not know.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
source "${FORK_ROOT}/hack/lib/kind.sh"

kind_build
docker_up
docker image inspect "${KIND_IMAGE}" >/dev/null 2>&1 || die "no image ${KIND_IMAGE}: run make kind-image first"
config=${KIND_CONFIG:-${FORK_ROOT}/kind/config.yaml}
if [[ -n ${KIND_STOCK:-} ]]; then
  mkdir -p "${KIND_WORK}"
  grep -v -e '^featureGates:' -e '^  WorkloadConfigSnapshot:' "${config}" >"${KIND_WORK}/config-stock.yaml"
  config=${KIND_WORK}/config-stock.yaml
fi
# kind mounts the host's /lib/modules into its nodes; where there is none, make an empty one
# (and remember to remove it: make kind-down).
if [[ ! -e /lib/modules ]]; then
  mkdir /lib/modules
  touch "${KIND_WORK}/created-lib-modules"
fi
if "${FORK_BIN}/kind" get clusters 2>/dev/null | grep -qx "${KIND_CLUSTER}"; then
  log "kind cluster ${KIND_CLUSTER} exists already"
else
  log "kind create cluster ${KIND_CLUSTER} (${KIND_IMAGE})"
  "${FORK_BIN}/kind" create cluster --name "${KIND_CLUSTER}" --image "${KIND_IMAGE}" \
    --config "${config}" --kubeconfig "${KIND_KUBECONFIG}" --wait 5m --retain
fi
"${FORK_BIN}/kind" export kubeconfig --name "${KIND_CLUSTER}" --kubeconfig "${KIND_KUBECONFIG}" >/dev/null 2>&1
export KUBECONFIG=${KIND_KUBECONFIG}

"${FORK_ROOT}/hack/node-images.sh" build-if-missing
log "loading the e2e test images into the nodes"
for image in busybox agnhost pause web; do
  "${FORK_BIN}/kind" load image-archive --name "${KIND_CLUSTER}" "${FORK_OUTPUT}/images/${image}.tar" >/dev/null
done
kubectl=${FORK_BIN}/kubectl
if [[ $(cat "${KIND_WORK}/images-mode" 2>/dev/null) == local ]]; then
  # The local-path-provisioner stand-in provisions nothing: without a default StorageClass,
  # tests that need volumes skip themselves ("no default storage class") instead of waiting
  # for claims that stay Pending.
  "${kubectl}" delete storageclass standard --ignore-not-found >/dev/null
fi
"${kubectl}" wait --for=condition=Ready nodes --all --timeout=5m >/dev/null
"${kubectl}" -n kube-system wait --for=condition=Ready pods --all --timeout=5m >/dev/null
"${kubectl}" get nodes -o wide
cat <<MSG

kind cluster ${KIND_CLUSTER} is up (${KIND_IMAGE}):
  export KUBECONFIG=${KIND_KUBECONFIG}${DOCKER_HOST:+
  export DOCKER_HOST=${DOCKER_HOST}}
  ${kubectl} version
  make test-e2e E2E_CLUSTER=kind      # the ConfigSnapshot e2e tests against it
  make kind-down
MSG
