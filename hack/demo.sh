#!/usr/bin/env bash
# make demo: the user story on the local cluster (make up), narrated for a person watching.
# Every step checks what it shows; the demo exits non-zero at the first step that does not happen.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

export KUBECONFIG=${LOCAL_KUBECONFIG}
KUBECTL=("${FORK_BIN}/kubectl")
NS=${DEMO_NAMESPACE:-snapshot-demo}
SNAP_LABEL=configsnapshot.apps.kubernetes.io/snapshot=true
[[ -f ${KUBECONFIG} ]] || die "no local cluster: run 'make up' first"

# Colour only on a terminal; the commands are printed as a person would type them from the
# repository root, with the KUBECONFIG and PATH that make up prints.
bold='' red='' green='' plain=''
if [[ -t 1 ]]; then bold=$'\033[1m' red=$'\033[31m' green=$'\033[32m' plain=$'\033[0m'; fi
step=0
say() { step=$((step + 1)); printf '\n%s== %d. %s%s\n' "${bold}" "${step}" "$*" "${plain}"; }
# quote prints one word of a command so that a shell reads it back as it is.
quote() {
  local w=$1
  [[ ${w} == "${FORK_BIN}/kubectl" ]] && w=kubectl
  w=${w#"${FORK_ROOT}/"}
  if [[ ${w} =~ ^[A-Za-z0-9_./=:,@%+-]+$ ]]; then printf '%s' "${w}"; else printf "'%s'" "${w//\'/\'\\\'\'}"; fi
}
run() {
  local words=() w
  for w in "$@"; do words+=("$(quote "${w}")"); done
  printf '$ %s\n' "${words[*]}"
  "$@"
}
# waiting says what the demo waits for before it polls.
waiting() { printf '(waiting for %s)\n' "$*"; }
k() { "${KUBECTL[@]}" -n "${NS}" "$@"; }
fail() { printf '%sDEMO FAILED at step %d: %s%s\n' "${red}" "${step}" "$*" "${plain}" >&2; exit 1; }
# snapshot_of RS: the ConfigMap that a ReplicaSet's pods mount.
config_of_rs() { k get rs "$1" -o jsonpath='{.spec.template.spec.volumes[0].configMap.name}'; }
current_rs() {
  local rev
  rev=$(k get deploy web -o jsonpath='{.metadata.annotations.deployment\.kubernetes\.io/revision}')
  k get rs -l app=web -o jsonpath="{range .items[?(@.metadata.annotations.deployment\.kubernetes\.io/revision==\"${rev}\")]}{.metadata.name}{end}"
}
wait_revision() {
  local want=$1
  waiting "revision ${want} of the Deployment"
  for _ in $(seq 1 60); do
    [[ $(k get deploy web -o jsonpath='{.metadata.annotations.deployment\.kubernetes\.io/revision}') == "${want}" ]] && return 0
    sleep 1
  done
  fail "the Deployment did not reach revision ${want}"
}
# pods_mount SNAPSHOT [APP]: every running pod labelled app=APP (default web) uses SNAPSHOT: the
# web pods mount it (volume), the agent pods read their environment from it (envFrom). On a real
# node (make up NODES=real) a pod also reads the snapshot's content: from its file (web), from its
# environment (agent).
pods_mount() {
  local want=$1 app=${2:-web} mounted='' ref='{.spec.volumes[0].configMap.name}'
  local key=greeting read=(cat /etc/web/greeting)
  if [[ ${app} == agent ]]; then ref='{.spec.containers[0].envFrom[0].configMapRef.name}' key=level read=(printenv level); fi
  waiting "every running ${app} pod to use ${want}"
  for _ in $(seq 1 60); do
    local mounts
    mounts=$(k get pods -l "app=${app}" --field-selector=status.phase=Running -o jsonpath="{range .items[*]}${ref}{\"\\n\"}{end}" | sort -u)
    if [[ ${mounts} == "${want}" ]]; then mounted=1; break; fi
    sleep 1
  done
  [[ -n ${mounted} ]] || fail "the pods do not all use ${want}: $(k get pods -l "app=${app}" -o jsonpath="{.items[*]${ref#\{}")"
  [[ -f ${LOCAL_DIR}/node/kubelet.pid ]] || return 0
  local pod content
  content=$(k get cm "${want}" -o jsonpath="{.data.${key}}")
  pod=$(k get pods -l "app=${app}" --field-selector=status.phase=Running -o jsonpath='{.items[0].metadata.name}')
  for _ in $(seq 1 30); do
    [[ $(k exec "${pod}" -- "${read[@]}" 2>/dev/null) == "${content}" ]] && break
    sleep 1
  done
  run "${KUBECTL[@]}" -n "${NS}" exec "${pod}" -- "${read[@]}"
  [[ $(k exec "${pod}" -- "${read[@]}") == "${content}" ]] || fail "pod ${pod} does not read ${content} (${read[*]})"
}
# wait_no_snapshots: wait until the garbage collector has deleted every snapshot.
wait_no_snapshots() {
  waiting "the garbage collector to delete the snapshots"
  for _ in $(seq 1 60); do
    [[ -z $(k get cm -l "${SNAP_LABEL}" -o name) ]] && return 0
    sleep 1
  done
  fail "snapshots left behind"
}

"${KUBECTL[@]}" delete namespace "${NS}" --ignore-not-found --wait=true >/dev/null
"${KUBECTL[@]}" create namespace "${NS}" >/dev/null

say "Apply a Deployment whose ConfigMap volume has snapshot: true and watch: true"
run sed -n '/volumes:/,$p' "${FORK_ROOT}/demo/web.yaml"
run "${KUBECTL[@]}" -n "${NS}" apply -f "${FORK_ROOT}/demo/web.yaml"
run "${KUBECTL[@]}" -n "${NS}" rollout status deployment/web --timeout=90s || fail "rollout did not complete"

say "The ReplicaSet's pods mount an immutable snapshot of web-config, not web-config itself"
rs1=$(current_rs); snap1=$(config_of_rs "${rs1}")
[[ ${snap1} == web-config-* ]] || fail "ReplicaSet ${rs1} mounts ${snap1}"
run "${KUBECTL[@]}" -n "${NS}" get configmaps -l "${SNAP_LABEL}" -o custom-columns=NAME:.metadata.name,IMMUTABLE:.immutable,SOURCE:.metadata.annotations.configsnapshot\\.apps\\.kubernetes\\.io/source,OWNER:.metadata.ownerReferences[*].name,GREETING:.data.greeting
say "The snapshot is owned by its holder, which lists the ReplicaSets that use it"
run "${KUBECTL[@]}" -n "${NS}" get configmaps -l configsnapshot.apps.kubernetes.io/holder=true -o custom-columns=NAME:.metadata.name,HOLDS:.metadata.annotations.configsnapshot\\.apps\\.kubernetes\\.io/holds,OWNERS:.metadata.ownerReferences[*].name
[[ $(k get cm "${snap1}" -o jsonpath='{.immutable}') == true ]] || fail "${snap1} is not immutable"
pods_mount "${snap1}"
echo "ReplicaSet ${rs1} and its pods use ${snap1}."
run "${KUBECTL[@]}" -n "${NS}" describe deployment web

say "Edit the ConfigMap: the Deployment rolls out by itself, and this release's rollout status waits for it"
run "${KUBECTL[@]}" -n "${NS}" patch configmap web-config --type merge -p '{"data":{"greeting":"bonjour"}}'
run "${KUBECTL[@]}" -n "${NS}" rollout status deployment/web --timeout=90s || fail "rollout did not complete"
[[ $(k get deploy web -o jsonpath='{.metadata.annotations.deployment\.kubernetes\.io/revision}') == 2 ]] ||
  fail "rollout status returned before revision 2 rolled out"
rs2=$(current_rs); snap2=$(config_of_rs "${rs2}")
[[ ${snap2} != "${snap1}" && $(k get cm "${snap2}" -o jsonpath='{.data.greeting}') == bonjour ]] || fail "no new snapshot with the new content"
pods_mount "${snap2}"
run "${KUBECTL[@]}" -n "${NS}" rollout history deployment/web
run "${KUBECTL[@]}" -n "${NS}" get rs -l app=web -o custom-columns=NAME:.metadata.name,REVISION:.metadata.annotations.deployment\\.kubernetes\\.io/revision,REPLICAS:.spec.replicas,CONFIG:.spec.template.spec.volumes[0].configMap.name

say "What changed, and why it rolled: the rollout's event and the revision's history name the key"
run "${KUBECTL[@]}" -n "${NS}" get events --field-selector reason=ConfigSnapshotRollout -o custom-columns=OBJECT:.involvedObject.name,MESSAGE:.message
[[ $(k get events --field-selector reason=ConfigSnapshotRollout -o jsonpath='{.items[*].message}') == *"ConfigMap web-config changed keys [greeting]"* ]] || fail "no event names the changed key"
run "${KUBECTL[@]}" -n "${NS}" rollout history deployment/web --revision=2
[[ $(k rollout history deployment/web --revision=2) == *'changed  greeting: "hello" -> "bonjour"'* ]] || fail "the history of revision 2 does not show the change of greeting"

say "That was a mistake: kubectl rollout undo brings the old content back"
run "${KUBECTL[@]}" -n "${NS}" rollout undo deployment/web
wait_revision 3
run "${KUBECTL[@]}" -n "${NS}" rollout status deployment/web --timeout=90s || fail "rollout did not complete"
pods_mount "${snap1}"
echo "The pods mount ${snap1} again (greeting: $(k get cm "${snap1}" -o jsonpath='{.data.greeting}'))."

say "The Deployment is now pinned to that snapshot: editing web-config again rolls nothing"
run "${KUBECTL[@]}" -n "${NS}" get deployment web -o jsonpath='{.spec.template.spec.volumes[0].configMap.name}{"\n"}'
[[ $(k get deploy web -o jsonpath='{.spec.template.spec.volumes[0].configMap.name}') == "${snap1}" ]] || fail "the Deployment is not pinned"
run "${KUBECTL[@]}" -n "${NS}" patch configmap web-config --type merge -p '{"data":{"greeting":"hola"}}'
sleep 5
[[ $(k get deploy web -o jsonpath='{.metadata.annotations.deployment\.kubernetes\.io/revision}') == 3 ]] || fail "a pinned Deployment rolled forward"
echo "Still at revision 3. (kubectl apply -f demo/web.yaml would resume tracking web-config.)"

say "A source that does not exist: the Deployment says so, keeps running, and rolls out once it exists"
run "${KUBECTL[@]}" -n "${NS}" patch deployment web --type=json -p '[{"op":"add","path":"/spec/template/spec/volumes/-","value":{"name":"extra","configMap":{"name":"web-extra","snapshot":true}}}]'
waiting "the Deployment to report the missing source"
for _ in $(seq 1 60); do
  [[ $(k get deploy web -o jsonpath='{.status.conditions[?(@.type=="ConfigSnapshotFailure")].reason}') == SnapshotSourceMissing ]] && break
  sleep 1
done
run "${KUBECTL[@]}" -n "${NS}" get deployment web -o jsonpath='{range .status.conditions[?(@.type=="ConfigSnapshotFailure")]}{.reason}: {.message}{"\n"}{end}'
[[ $(k get deploy web -o jsonpath='{.status.conditions[?(@.type=="ConfigSnapshotFailure")].reason}') == SnapshotSourceMissing ]] || fail "no SnapshotSourceMissing condition"
run "${KUBECTL[@]}" -n "${NS}" create configmap web-extra --from-literal=mode=fast
wait_revision 4
run "${KUBECTL[@]}" -n "${NS}" rollout status deployment/web --timeout=90s || fail "rollout did not complete"
[[ -z $(k get deploy web -o jsonpath='{.status.conditions[?(@.type=="ConfigSnapshotFailure")].reason}') ]] || fail "the condition stayed"
echo "Revision 4 runs, and the condition is gone."

say "Delete the Deployment: its snapshots go with its ReplicaSets"
run "${KUBECTL[@]}" -n "${NS}" delete deployment web
wait_no_snapshots
run "${KUBECTL[@]}" -n "${NS}" get configmaps

agent_snapshot() { k get cm -l "${SNAP_LABEL}" -o jsonpath="{range .items[?(@.data.level==\"$1\")]}{.metadata.name}{end}"; }

say "A DaemonSet (a node agent) does the same with environment variables (envFrom), with ControllerRevisions"
run sed -n '/containers:/,$p' "${FORK_ROOT}/demo/agent.yaml"
run "${KUBECTL[@]}" -n "${NS}" apply -f "${FORK_ROOT}/demo/agent.yaml"
run "${KUBECTL[@]}" -n "${NS}" rollout status daemonset/agent --timeout=90s || fail "rollout did not complete"
agent1=$(agent_snapshot info)
[[ ${agent1} == agent-config-* ]] || fail "no snapshot of agent-config"
pods_mount "${agent1}" agent
echo "Every agent pod reads its environment from ${agent1}."
run "${KUBECTL[@]}" -n "${NS}" patch configmap agent-config --type merge -p '{"data":{"level":"debug"}}'
for _ in $(seq 1 60); do agent2=$(agent_snapshot debug); [[ -n ${agent2} ]] && break; sleep 1; done
[[ -n ${agent2} ]] || fail "no snapshot of the new content"
pods_mount "${agent2}" agent
run "${KUBECTL[@]}" -n "${NS}" rollout history daemonset/agent
run "${KUBECTL[@]}" -n "${NS}" rollout undo daemonset/agent
pods_mount "${agent1}" agent
echo "After kubectl rollout undo every agent pod reads its environment from ${agent1} again."
run "${KUBECTL[@]}" -n "${NS}" delete daemonset agent
wait_no_snapshots
echo "Deleted with the DaemonSet's ControllerRevisions: no snapshot left."

"${KUBECTL[@]}" delete namespace "${NS}" --wait=false >/dev/null
printf '\n%sDemo complete: snapshot, automatic rollout, rollback, pinning, a missing source and cleanup all happened, for a Deployment and a DaemonSet.%s\n' "${green}" "${plain}"
