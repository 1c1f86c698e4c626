#!/usr/bin/env bash
# The rollout status check of hack/test-e2e.sh (suite snapshot): after an edit of a watched
# ConfigMap, stock kubectl v1.37.1's `rollout status` returns while the workload still runs its
# old revision (the generation does not change), and this release's kubectl waits until the new
# revision has rolled out. For a Deployment, a DaemonSet and a StatefulSet, on the cluster of
# KUBECONFIG (fake nodes will do: kwok makes the pods ready).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

PATCHED=${FORK_BIN}/kubectl
STOCK=${FORK_BIN}/stock/kubectl
NS=rollout-status-$$

k() { "${PATCHED}" -n "${NS}" "$@"; }

# workload KIND: the manifest of a workload of KIND named web that mounts web-config with
# snapshot and watch.
workload() {
  local kind=$1 extra=''
  case ${kind} in
    Deployment) extra='  replicas: 1' ;;
    StatefulSet) extra=$'  replicas: 1\n  serviceName: web' ;;
  esac
  cat <<YAML
apiVersion: apps/v1
kind: ${kind}
metadata:
  name: web
spec:
${extra}
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: registry.k8s.io/e2e-test-images/agnhost:2.66.1
        args: [pause]
        volumeMounts: [{name: config, mountPath: /etc/web}]
      volumes:
      - name: config
        configMap: {name: web-config, snapshot: true, watch: true}
YAML
}

# revisions KIND: the number of revisions of web (ReplicaSets or ControllerRevisions).
revisions() {
  if [[ $1 == Deployment ]]; then
    k get replicasets -l app=web -o name | wc -l
  else
    k get controllerrevisions -l app=web -o name | wc -l
  fi
}

check() {
  local kind=$1 w
  w=${1,,}/web
  log "rollout status after a watched edit: ${kind}"
  k create configmap web-config --from-literal=greeting=hello >/dev/null
  workload "${kind}" | k apply -f - >/dev/null
  k rollout status "${w}" --timeout=2m >/dev/null
  [[ $(revisions "${kind}") == 1 ]] || die "${kind}: want 1 revision before the edit"

  k patch configmap web-config --type merge -p '{"data":{"greeting":"bonjour"}}' >/dev/null
  "${STOCK}" -n "${NS}" rollout status "${w}" --timeout=2m >/dev/null
  # The stock client returned; the new revision waits for the batch window (1 s) at least.
  [[ $(revisions "${kind}") == 1 ]] || die "${kind}: stock rollout status returned after the new revision: the check proves nothing"

  local out
  out=$(k rollout status "${w}" --timeout=2m) || die "${kind}: rollout status failed: ${out}"
  [[ ${out} == *"to make the revision of ConfigMap web-config's change"* ]] ||
    die "${kind}: rollout status did not wait for the new revision: ${out}"
  [[ $(revisions "${kind}") == 2 ]] || die "${kind}: rollout status returned without a new revision: ${out}"
  k delete "${w}" --wait=true >/dev/null
  k delete configmap web-config >/dev/null
}

"${PATCHED}" create namespace "${NS}" >/dev/null
trap '"${PATCHED}" delete namespace "${NS}" --wait=false >/dev/null 2>&1 || true' EXIT
for kind in Deployment DaemonSet StatefulSet; do check "${kind}"; done
log "rollout status: stock kubectl returns before a watched edit's revision, this release's waits for it (3 kinds)"
