#!/usr/bin/env bash
# make test-argo-rollouts-e2e: Argo Rollouts, built against the release (hack/argo-rollouts.sh),
# on the local cluster of 'make up', canaries a ConfigMap change and aborts back to the old one.
#
# The cluster must run with ConfigSnapshotRestriction's configuration that adds the snapshot
# writer of Rollouts (ADMISSION_CONFIG of hack/local-up.sh): when no cluster runs, this script
# starts one so, and stops it at the end; when one runs without it, it stops and says so. Argo Rollouts runs here as a
# process (its pid recorded, stopped at the end) with the credentials of its service account and
# Argo's own ClusterRole, and writes snapshots with those of a second service account, the
# writer. The user's steps use stock kubectl v1.37.1 and Argo's kubectl plugin.
#
# The story, each step checked:
#  0. a Rollout whose ConfigMap is missing reports it in its ConfigSnapshotFailure condition and
#     gets no ReplicaSet until the ConfigMap exists;
#  1. a Rollout (canary: setWeight 50, pause) mounts a ConfigMap (snapshot, watch) and a Secret
#     (snapshot): its ReplicaSet mounts copies of them;
#  2. an edit of the ConfigMap starts a canary: a new ReplicaSet with a new copy, the stable one
#     keeps the old; the Rollout pauses at its step;
#  3. promote: the new ReplicaSet is stable, the old one is scaled down;
#  4. a new image goes through the canary too, with the content of step 2;
#  5. a second edit starts a canary; abort: every pod runs the stable ReplicaSet, with the
#     content of step 2;
#  6. undo to revision 1: the old image with the content of step 1 again (a pinned copy);
#  7. a stolen controller token writes no ConfigMap; a stolen writer token writes no ConfigMap
#     that is not a snapshot and edits no Rollout;
#  8. deleting the Rollout deletes the copies.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

NS=argo-story
SYSTEM=argo-rollouts
WRITER=system:serviceaccount:${SYSTEM}:config-snapshot-writer
WORK=${FORK_OUTPUT}/argo-rollouts-e2e
ARGO_TREE=${FORK_OUTPUT}/argo-rollouts
KUBECTL=${FORK_BIN}/stock/kubectl
PLUGIN=${FORK_BIN}/kubectl-argo-rollouts
CONTROLLER_PID=
STARTED_CLUSTER=
mkdir -p "${WORK}"

admission_config() {
  cat >"${WORK}/admission.yaml" <<EOF
apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: ConfigSnapshotRestriction
  configuration:
    apiVersion: configsnapshotrestriction.admission.k8s.io/v1alpha1
    kind: ConfigSnapshotRestrictionConfiguration
    writers:
    - user: ${WRITER}
      workloads:
      - {apiVersion: argoproj.io/v1alpha1, kind: Rollout, resource: rollouts, revisionKind: ReplicaSet}
EOF
}

k() { "${KUBECTL}" --kubeconfig "${LOCAL_KUBECONFIG}" "$@"; }
argo() { "${PLUGIN}" --kubeconfig "${LOCAL_KUBECONFIG}" -n "${NS}" "$@"; }
step() { log "story: $*"; }
fail() {
  k -n "${NS}" get rollout,rs,pods,cm,secrets -o wide >&2 || true
  tail -30 "${WORK}/controller.log" >&2 || true
  die "$*"
}

# wait_for DESCRIPTION COMMAND...: until COMMAND succeeds, 120 s at most.
wait_for() {
  local what=$1 i
  shift
  for ((i = 0; i < 240; i++)); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.5
  done
  fail "timed out waiting for ${what}"
}

cleanup() {
  if [[ -n ${CONTROLLER_PID} ]]; then
    kill "${CONTROLLER_PID}" 2>/dev/null || true
    wait "${CONTROLLER_PID}" 2>/dev/null || true
  fi
  if [[ -n ${STARTED_CLUSTER} ]]; then
    "${FORK_ROOT}/hack/local-down.sh" || true
  fi
}
trap cleanup EXIT

# token_kubeconfig SA FILE: a kubeconfig of the local cluster with a token of service account SA.
token_kubeconfig() {
  local token server ca
  token=$(k -n "${SYSTEM}" create token "$1" --duration 2h)
  server=$(k config view --minify -o jsonpath='{.clusters[0].cluster.server}')
  # kwokctl's kubeconfig names its CA file.
  ca=$(k config view --minify -o jsonpath='{.clusters[0].cluster.certificate-authority}')
  cat >"$2" <<EOF
apiVersion: v1
kind: Config
clusters: [{name: local, cluster: {server: "${server}", certificate-authority: "${ca}"}}]
users: [{name: $1, user: {token: "${token}"}}]
contexts: [{name: local, context: {cluster: local, user: $1}}]
current-context: local
EOF
}

setup() {
  [[ -x ${KUBECTL} ]] || "${FORK_ROOT}/hack/build-stock-kubectl.sh"
  "${FORK_ROOT}/hack/argo-rollouts.sh" build
  admission_config
  if ! [[ -f ${LOCAL_KUBECONFIG} ]] || ! k get --raw /readyz >/dev/null 2>&1; then
    "${FORK_ROOT}/hack/build.sh"
    STARTED_CLUSTER=1
    ADMISSION_CONFIG=${WORK}/admission.yaml "${FORK_ROOT}/hack/local-up.sh"
  fi
  k create namespace "${SYSTEM}" --dry-run=client -o yaml | k apply -f - >/dev/null
  k -n "${SYSTEM}" create serviceaccount argo-rollouts --dry-run=client -o yaml | k apply -f - >/dev/null
  k -n "${SYSTEM}" create serviceaccount config-snapshot-writer --dry-run=client -o yaml | k apply -f - >/dev/null
  # The authorizer grants the writer its snapshot writes only when kube-apiserver was started
  # with the configuration above.
  if [[ $(k auth can-i create configmaps -n default --as "${WRITER}" 2>/dev/null || true) != yes ]]; then
    die "the local cluster does not know the snapshot writer of Rollouts: run 'make down', then this again (it starts the cluster with ADMISSION_CONFIG=${WORK#"${FORK_ROOT}"/}/admission.yaml)"
  fi
  local crd
  for crd in "${ARGO_TREE}"/manifests/crds/*-crd.yaml; do
    k apply --server-side --force-conflicts -f "${crd}" >/dev/null
  done
  k apply -f "${ARGO_TREE}/manifests/role/argo-rollouts-clusterrole.yaml" >/dev/null
  k create clusterrolebinding argo-rollouts --clusterrole argo-rollouts --serviceaccount "${SYSTEM}:argo-rollouts" --dry-run=client -o yaml | k apply -f - >/dev/null
  k wait --for condition=Established crd/rollouts.argoproj.io --timeout 60s >/dev/null
  token_kubeconfig argo-rollouts "${WORK}/controller.kubeconfig"
  token_kubeconfig config-snapshot-writer "${WORK}/writer.kubeconfig"
  k delete namespace "${NS}" --ignore-not-found --wait >/dev/null
  k create namespace "${NS}" >/dev/null
  "${FORK_BIN}/rollouts-controller" --kubeconfig "${WORK}/controller.kubeconfig" --leader-elect=false \
    --config-snapshots --config-snapshot-writer-kubeconfig "${WORK}/writer.kubeconfig" \
    --metricsPort 18090 --healthzPort 18080 >"${WORK}/controller.log" 2>&1 &
  CONTROLLER_PID=$!
}

# mounted RS: the ConfigMap and Secret that ReplicaSet RS's pods mount ("configmap secret").
mounted() {
  k -n "${NS}" get rs "$1" -o jsonpath='{.spec.template.spec.volumes[0].configMap.name} {.spec.template.spec.volumes[1].secret.secretName}'
}
greeting() { k -n "${NS}" get cm "$1" -o jsonpath='{.data.greeting}'; }
# rs_of REVISION: the name of the Rollout web's ReplicaSet of that revision (fails when none). The
# ReplicaSet of step 0's Rollout, revision 1 too, may outlive it until the garbage collector,
# slow on a fresh cluster, gets to it.
rs_of() {
  local name
  name=$(k -n "${NS}" get rs -l app=web -o json | jq -r --arg r "$1" '.items[] | select(.metadata.annotations["rollout.argoproj.io/revision"] == $r) | .metadata.name')
  [[ -n ${name} ]] && echo "${name}"
}
ready_replicas() { [[ $(k -n "${NS}" get rs "$1" -o jsonpath='{.status.readyReplicas}') == "$2" ]]; }
scaled_to() { [[ $(k -n "${NS}" get rs "$1" -o jsonpath='{.spec.replicas}') == "$2" ]]; }
phase_is() { [[ $(k -n "${NS}" get rollout web -o jsonpath='{.status.phase}') == "$1" ]]; }
phase_in() { phase_is "$1" || phase_is "$2"; }
# pods_on RS: every pod of the Rollout belongs to ReplicaSet RS.
pods_on() {
  local owners
  owners=$(k -n "${NS}" get pods -l app=web -o json | jq -r '.items[] | select(.metadata.deletionTimestamp == null) | .metadata.ownerReferences[0].name' | sort -u)
  [[ ${owners} == "$1" ]]
}
set_greeting() { k -n "${NS}" patch cm app-config --type merge -p "{\"data\":{\"greeting\":\"$1\"}}" >/dev/null; }
# pods_mount CM: every pod of the Rollout mounts ConfigMap CM.
pods_mount() {
  local mounts
  mounts=$(k -n "${NS}" get pods -l app=web -o json | jq -r '.items[] | select(.metadata.deletionTimestamp == null) | .spec.volumes[0].configMap.name' | sort -u)
  [[ ${mounts} == "$1" ]]
}

# condition_reason ROLLOUT: the reason of the Rollout's ConfigSnapshotFailure condition, if any.
condition_reason() {
  k -n "${NS}" get rollout "$1" -o jsonpath='{.status.conditions[?(@.type=="ConfigSnapshotFailure")].reason}'
}
reason_is() { [[ $(condition_reason "$1") == "$2" ]]; }
no_condition() { [[ -z $(condition_reason "$1") ]]; }
early_rs() { [[ -n $(k -n "${NS}" get rs -l app=early -o name) ]]; }

story() {
  step "0. a Rollout whose ConfigMap does not exist yet reports it, and starts once it exists"
  k -n "${NS}" apply -f - >/dev/null <<EOF
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: early}
spec:
  replicas: 1
  selector: {matchLabels: {app: early}}
  strategy: {canary: {steps: [{setWeight: 50}, {pause: {}}]}}
  template:
    metadata: {labels: {app: early}}
    spec:
      containers: [{name: early, image: "registry.k8s.io/pause:3.10.1"}]
      volumes: [{name: config, configMap: {name: early-config, snapshot: true}}]
EOF
  wait_for "the Rollout's SnapshotSourceMissing condition" reason_is early SnapshotSourceMissing
  ! early_rs || fail "a Rollout whose source is missing got a ReplicaSet"
  k -n "${NS}" create configmap early-config --from-literal greeting=early >/dev/null
  wait_for "the Rollout's ReplicaSet once the ConfigMap exists" early_rs
  wait_for "the condition removed" no_condition early
  k -n "${NS}" delete rollout early --wait >/dev/null
  log "  reported ConfigSnapshotFailure/SnapshotSourceMissing with no ReplicaSet; made one once the ConfigMap existed"

  step "1. a Rollout mounts a watched ConfigMap and a Secret, both with snapshot: true"
  k -n "${NS}" create configmap app-config --from-literal greeting=v1 >/dev/null
  k -n "${NS}" create secret generic app-secret --from-literal password=p1 >/dev/null
  k -n "${NS}" apply -f - >/dev/null <<EOF
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  strategy:
    canary:
      steps: [{setWeight: 50}, {pause: {}}]
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: "registry.k8s.io/pause:3.10.1"}]
      volumes:
      - {name: config, configMap: {name: app-config, snapshot: true, watch: true}}
      - {name: secret, secret: {secretName: app-secret, snapshot: true}}
EOF
  [[ $(k -n "${NS}" get rollout web -o jsonpath='{.spec.template.spec.volumes[0].configMap.snapshot}') == true ]] ||
    fail "kube-apiserver pruned snapshot from the Rollout: its CRD is not the regenerated one"
  wait_for "revision 1" rs_of 1
  local rs1 rs2 rs3 rs4 cm1 cm2 secret1
  rs1=$(rs_of 1)
  wait_for "revision 1 ready" ready_replicas "${rs1}" 2
  read -r cm1 secret1 <<<"$(mounted "${rs1}")"
  [[ ${cm1} != app-config && ${secret1} != app-secret && $(greeting "${cm1}") == v1 ]] ||
    fail "revision 1 mounts ${cm1} ${secret1}, not snapshots of v1"
  log "  revision 1 (${rs1}) mounts ${cm1} (greeting=v1) and ${secret1}"

  step "2. an edit of the ConfigMap starts a canary; the stable ReplicaSet keeps the old copy"
  set_greeting v2
  wait_for "revision 2" rs_of 2
  rs2=$(rs_of 2)
  read -r cm2 _ <<<"$(mounted "${rs2}")"
  [[ ${cm2} != "${cm1}" && $(greeting "${cm2}") == v2 ]] || fail "revision 2 mounts ${cm2}, not a snapshot of v2"
  wait_for "the canary's pause" phase_is Paused
  [[ $(mounted "${rs1}") == "${cm1} ${secret1}" ]] || fail "the stable ReplicaSet changed during the canary"
  log "  revision 2 (${rs2}) mounts ${cm2} (greeting=v2); revision 1 still mounts ${cm1}; paused at setWeight 50"

  step "3. promote: revision 2 is stable"
  argo promote web >/dev/null
  wait_for "revision 2 stable" phase_is Healthy
  wait_for "revision 1 scaled down" scaled_to "${rs1}" 0
  wait_for "every pod on revision 2" pods_mount "${cm2}"
  [[ $(k -n "${NS}" get rollout web -o jsonpath='{.spec.template.spec.volumes[0].configMap.name}') == app-config ]] ||
    fail "the Rollout's spec names a snapshot: the resolved template was written back"

  step "4. a new image goes through the canary too (revision 3, the content of revision 2)"
  k -n "${NS}" patch rollout web --type json -p '[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"registry.k8s.io/pause:3.10"}]' >/dev/null
  wait_for "revision 3" rs_of 3
  rs3=$(rs_of 3)
  [[ $(mounted "${rs3}" | cut -d' ' -f1) == "${cm2}" ]] || fail "revision 3 does not mount ${cm2}: an image change made a new copy"
  wait_for "the canary's pause" phase_is Paused
  argo promote web >/dev/null
  wait_for "revision 3 stable" phase_is Healthy
  wait_for "every pod on revision 3" pods_on "${rs3}"

  step "5. a second edit starts a canary; abort brings every pod back to the content of revision 2"
  set_greeting v3
  wait_for "revision 4" rs_of 4
  rs4=$(rs_of 4)
  [[ $(greeting "$(mounted "${rs4}" | cut -d' ' -f1)") == v3 ]] || fail "revision 4 does not mount a snapshot of v3"
  wait_for "the canary's pause" phase_is Paused
  argo abort web >/dev/null
  wait_for "revision 4 scaled down" scaled_to "${rs4}" 0
  wait_for "every pod on revision 3" pods_on "${rs3}"
  pods_mount "${cm2}" || fail "after the abort, pods do not all mount ${cm2}"
  log "  aborted: every pod mounts ${cm2} (greeting=v2), while the ConfigMap says v3"

  step "6. undo to revision 1: its image and its content, pinned"
  argo undo web --to-revision 1 >/dev/null
  wait_for "the undo's canary" phase_in Paused Healthy
  if phase_is Paused; then argo promote web >/dev/null; fi
  wait_for "the undo stable" phase_is Healthy
  wait_for "every pod on revision 1's content (greeting=v1)" pods_mount "${cm1}"
  [[ $(k -n "${NS}" get rollout web -o jsonpath='{.spec.template.spec.containers[0].image}') == registry.k8s.io/pause:3.10.1 ]] ||
    fail "the undo did not bring the old image back"
  log "  every pod mounts ${cm1} (greeting=v1) with image pause:3.10.1; the ConfigMap still says v3"

  step "7. stolen tokens"
  local controller=(--kubeconfig "${WORK}/controller.kubeconfig" -n "${NS}") writer=(--kubeconfig "${WORK}/writer.kubeconfig" -n "${NS}")
  if "${KUBECTL}" "${controller[@]}" create configmap stolen --from-literal a=b >/dev/null 2>&1; then
    fail "the controller's token wrote a ConfigMap"
  fi
  k -n "${NS}" create configmap unreferenced --from-literal a=b >/dev/null
  if "${KUBECTL}" "${writer[@]}" create configmap unreferenced-copy --from-literal a=b >/dev/null 2>&1; then
    fail "the writer's token wrote a ConfigMap that is no snapshot"
  fi
  if "${KUBECTL}" "${writer[@]}" patch rollout web --type merge -p '{"spec":{"replicas":5}}' >/dev/null 2>&1; then
    fail "the writer's token edited a Rollout"
  fi
  log "  the controller's token writes no ConfigMap; the writer's writes no other ConfigMap and edits no Rollout"

  step "8. deleting the Rollout deletes the copies"
  k -n "${NS}" delete rollout web --wait >/dev/null
  no_snapshots() {
    [[ -z $(k -n "${NS}" get cm,secrets -l configsnapshot.apps.kubernetes.io/snapshot -o name) ]]
  }
  wait_for "the snapshots deleted" no_snapshots
  log "story: all steps passed"
}

setup
story
