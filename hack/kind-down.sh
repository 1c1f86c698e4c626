#!/usr/bin/env bash
# make kind-down: delete the kind cluster of make kind-up, the docker network kind made for it,
# the Docker engine that make kind-up or kind-image started (by its pid), and an empty
# /lib/modules that kind-up made, and the registry of make test-conformance if it runs. Keeps the
# images (make kind-up starts again quickly).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
source "${FORK_ROOT}/hack/lib/kind.sh"

if [[ -S ${DOCKERD_DIR}/docker.sock ]]; then export DOCKER_HOST=unix://${DOCKERD_DIR}/docker.sock; fi
if command -v docker >/dev/null && docker info >/dev/null 2>&1 && [[ -x ${FORK_BIN}/kind ]]; then
  if "${FORK_BIN}/kind" get clusters 2>/dev/null | grep -qx "${KIND_CLUSTER}"; then
    log "kind delete cluster ${KIND_CLUSTER}"
    "${FORK_BIN}/kind" delete cluster --name "${KIND_CLUSTER}" --kubeconfig "${KIND_KUBECONFIG}"
  fi
  if [[ -f ${DOCKERD_DIR}/docker.pid ]] && docker network inspect kind >/dev/null 2>&1; then
    docker network rm kind >/dev/null
  fi
fi
"${FORK_ROOT}/hack/conformance-registry.sh" down # if make test-conformance left it running (KIND_KEEP)
docker_down
if [[ -f ${KIND_WORK}/created-lib-modules ]]; then
  rmdir /lib/modules 2>/dev/null || true
  rm -f "${KIND_WORK}/created-lib-modules"
fi
rm -f "${KIND_KUBECONFIG}"
