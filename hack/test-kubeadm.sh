#!/usr/bin/env bash
# make test-kubeadm: kubeadm for real, on this host, outside kind: the install, upgrade and
# downgrade of docs/operations.md, run as written there, with the checks of its Checks section
# after each step (per kube-apiserver, not through a load balancer).
#   0. the binaries: stock v1.37.1 (hack/build-stock-kubectl.sh: kubeadm, kubelet, kubectl and the
#      four control-plane components) and the release (make release RELEASE_KIND=0, unless
#      _output/release is there);
#   1. air-gapped images: a registry on this host (Debian's docker-registry at 127.0.0.1:5000,
#      the release's default RELEASE_REGISTRY localhost:5000/configsnapshot) holding every image
#      `kubeadm config images list` names for stock v1.37.1 and for the release (etcd, CoreDNS and
#      pause built here), and the release's four images from its archives;
#   2. a node as kubeadm expects one: containerd (Debian's, resolving the registry through its
#      hosts.toml), a CNI bridge, and the kubelet run the way kubeadm's systemd drop-in runs it
#      (this machine has no systemd: a loop restarts it, as Restart=always would);
#   3. `kubeadm init` of stock v1.37.1 with the stock kubeadm and kubelet, imageRepository the
#      registry; checks; a Deployment that uses no snapshot;
#   4. the upgrade: kubeadm-config edited (the gate on in kube-apiserver and
#      kube-controller-manager), `kubeadm upgrade plan`, `kubeadm upgrade apply
#      v1.37.1+configsnapshot.N`, drain, kubelet restart, uncordon; checks (nothing rolled);
#   5. stock kube-scheduler and kube-proxy put back under the patched control plane (the
#      kubelet and kubeadm stay stock throughout): the binaries that may stay stock;
#   6. the snapshot story with stock kubectl: pods that really read their files get the
#      snapshot's content, a watched edit rolls out, `kubectl rollout undo` brings back the old
#      content while the ConfigMap holds the new; stolen controller and writer tokens;
#   7. the downgrade: kubeadm-config without the gate, `kubeadm upgrade apply v1.37.1`; checks
#      (exactly the workloads that ask for snapshots without naming one roll once);
#   8. `kubeadm reset`, and everything this script changed on the host put back
#      (KUBEADM_KEEP=1 leaves the cluster running; hack/test-kubeadm.sh down removes it).
# Needs root, a host with no kubeadm install of its own (/etc/kubernetes, /var/lib/kubelet) and
# no local cluster running ('make down' first). Not part of make test.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
source "${FORK_ROOT}/hack/lib/images.sh"
source "${FORK_ROOT}/hack/lib/kind.sh"
source "${FORK_ROOT}/hack/lib/node.sh"

DIR=${FORK_OUTPUT}/kubeadm
NODE_DIR=${DIR}/node
# shellcheck disable=SC2034 # read by hack/lib/node.sh's record_host_state and restore_host_state
HOST_STATE=${DIR}/host-state
CONTAINERD_ADDRESS=${NODE_DIR}/containerd/containerd.sock
NODE_SYSCTLS+=(net.ipv4.conf.all.route_localnet)
NODE=configsnapshot-kubeadm
REGISTRY=localhost:5000/configsnapshot
REGISTRY_ADDRESS=127.0.0.1:5000
STOCK=${KUBE_VERSION}
RELEASE=$(release_version)
APISERVERS=("https://${NODE_IP}:6443")
KUBECONFIG=/etc/kubernetes/admin.conf
export KUBECONFIG
kubectl() { "${FORK_BIN}/stock/kubectl" "$@"; }
kubeadm() { "${FORK_BIN}/stock/kubeadm" "$@"; }

step() { log "=== $*"; }
fail() { die "FAIL: $*"; }

down() {
  [[ -d ${DIR} ]] || return 0
  log "removing the kubeadm cluster and putting the host back"
  if [[ -f /etc/kubernetes/.configsnapshot-test-kubeadm ]]; then
    kubeadm reset -f --cri-socket "unix://${CONTAINERD_ADDRESS}" >"${DIR}/logs/reset.log" 2>&1 || log "kubeadm reset failed: ${DIR}/logs/reset.log"
  fi
  stop_pidfile "the kubelet loop" "${DIR}/kubelet-loop.pid"
  stop_pidfile "the kubelet" "${DIR}/kubelet.pid"
  if ctr --address "${CONTAINERD_ADDRESS}" version >/dev/null 2>&1; then
    [[ -x ${FORK_BIN}/crireset ]] || build_crireset
    "${FORK_BIN}/crireset" --endpoint "unix://${CONTAINERD_ADDRESS}" || log "some sandboxes were not removed"
  fi
  stop_pidfile containerd "${NODE_DIR}/containerd.pid"
  stop_pidfile "the registry" "${DIR}/registry/pid"
  # kube-proxy's rules (iptables and nftables), as kube-proxy --cleanup removes them.
  [[ ! -x ${FORK_BIN}/stock/kube-proxy ]] || "${FORK_BIN}/stock/kube-proxy" --cleanup >/dev/null 2>&1 || true
  { findmnt -rn -o TARGET | grep -E "^(/var/lib/kubelet|${DIR})(/|$)" || true; } | sort -r | while read -r target; do
    umount "$(printf '%b' "${target}")" 2>/dev/null || umount -l "$(printf '%b' "${target}")" || log "could not unmount ${target}"
  done
  # What kubeadm reset leaves: the directories this script found absent.
  rm -rf /etc/kubernetes /var/lib/kubelet || log "could not remove /etc/kubernetes or /var/lib/kubelet"
  restore_host_state
  rm -rf "${DIR}"
}

if [[ ${1:-} == down ]]; then down; exit 0; fi
[[ ${EUID} -eq 0 ]] || die "kubeadm runs as root: run 'sudo make test-kubeadm'"
[[ ! -d ${DIR} ]] || die "${DIR#"${FORK_ROOT}"/} exists: a run is in progress or was kept; 'hack/test-kubeadm.sh down' removes it"
for path in /etc/kubernetes /var/lib/kubelet; do
  [[ ! -e ${path} ]] || die "${path} exists: this host has a kubeadm or kubelet install of its own; not touching it"
done
for port in 6443 2379 2380 10250 10257 10259 5000; do
  ! (exec 3<>"/dev/tcp/127.0.0.1/${port}") 2>/dev/null || die "port ${port} is in use ('make down' stops the local cluster)"
done

step "0. binaries: stock ${STOCK} and the release ${RELEASE}"
"${FORK_ROOT}/hack/install-node.sh"
apt_install skopeo conntrack socat ethtool
"${FORK_ROOT}/hack/build-stock-kubectl.sh" kubeadm kubelet kubectl kube-apiserver kube-controller-manager kube-scheduler kube-proxy
[[ -f ${FORK_OUTPUT}/release/SHA256SUMS ]] || RELEASE_KIND=0 "${FORK_ROOT}/hack/release.sh"
(cd "${FORK_OUTPUT}/release" && sha256sum --quiet -c SHA256SUMS) || die "_output/release does not match its SHA256SUMS"
[[ $(tar -xzOf "${FORK_OUTPUT}/release/kubernetes-server-linux-${ARCH}.tar.gz" kubernetes/version) == "${RELEASE}" ]] ||
  die "_output/release is not ${RELEASE}: run make release again"
"${FORK_ROOT}/hack/install-etcd.sh"
"${FORK_ROOT}/hack/node-images.sh" build-if-missing

trap '[[ -n ${KUBEADM_KEEP:-} ]] || down' EXIT
mkdir -p "${DIR}"/{logs,images,bin} "${NODE_DIR}/pod-logs"
record_host_state

step "1. the registry at ${REGISTRY_ADDRESS} with every image kubeadm lists"
registry_up "${DIR}/registry" "${REGISTRY_ADDRESS}"
push() { skopeo copy --quiet --dest-tls-verify=false "docker-archive:$1" "docker://${2/localhost:5000/${REGISTRY_ADDRESS}}" >/dev/null; }
for version in "${STOCK}" "${RELEASE}"; do
  kubeadm config images list --kubernetes-version "${version}" --image-repository "${REGISTRY}" >"${DIR}/images-${version}.txt"
done
cat "${DIR}"/images-*.txt | sort -u | while read -r ref; do
  name=${ref#"${REGISTRY}/"} name=${name%%:*} archive=${DIR}/images/${name}.tar
  case ${ref} in
    *:"${RELEASE//+/_}") cp "${FORK_OUTPUT}/release/images/${name}.tar" "${archive}" ;;
    *:"${STOCK}") component_image "${FORK_BIN}/stock/${name}" "${archive}" "${ref}" ;;
    */etcd:*) etcd_image "${archive}" "${ref}" ;;
    */coredns:*) coredns_image "${archive}" "${ref}" ;;
    */pause:*) pause_image "${archive}" "${ref}" ;;
    *) die "no image for ${ref}" ;;
  esac
  push "${archive}" "${ref}"
  rm -f "${archive}"
  echo "${ref}"
done >"${DIR}/pushed.txt"
log "pushed $(wc -l <"${DIR}/pushed.txt") images: $(tr '\n' ' ' <"${DIR}/pushed.txt")"

step "2. the node: containerd, a CNI bridge, the kubelet as kubeadm's drop-in runs it"
pod_network
mkdir -p "${NODE_DIR}/certs.d/localhost:5000"
printf 'server = "http://%s"\n\n[host."http://%s"]\n  capabilities = ["pull", "resolve"]\n' "${REGISTRY_ADDRESS}" "${REGISTRY_ADDRESS}" \
  >"${NODE_DIR}/certs.d/localhost:5000/hosts.toml"
# The registry through its hosts.toml; kube-proxy is privileged: on a host whose bounding set
# lacks a capability, runc-capfix drops it.
start_containerd "${REGISTRY}/pause:$(kubeadm_const PauseVersion)" "  [plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc]
    runtime_type = \"io.containerd.runc.v2\"
    [plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc.options]
      BinaryName = \"${FORK_ROOT}/hack/kind/runc-capfix\"
  [plugins.\"io.containerd.grpc.v1.cri\".registry]
    config_path = \"${NODE_DIR}/certs.d\""
# The workloads' image (busybox), loaded as an air-gapped node preloads what it runs.
ctr --address "${CONTAINERD_ADDRESS}" -n k8s.io images import --platform "linux/${ARCH}" "${FORK_OUTPUT}/images/busybox.tar" >/dev/null
# kubeadm runs the kubelet on PATH (kubelet --version) as the kubelet package installs it.
ln -sf "${FORK_BIN}/stock/kubelet" "${DIR}/bin/kubelet"
export PATH=${DIR}/bin:${PATH}
# kubeadm's preflight wants IPv4 forwarding (upstream's "Enable IPv4 packet forwarding").
sysctl -q -w net.ipv4.ip_forward=1
# kubeadm's 10-kubeadm.conf: the kubelet waits for kubeadm's files and reads its flags from them.
kubelet_loop() {
  local args
  while :; do
    if [[ -f /var/lib/kubelet/config.yaml ]]; then
      args=$(sed -n 's/^KUBELET_KUBEADM_ARGS="\(.*\)"$/\1/p' /var/lib/kubelet/kubeadm-flags.env 2>/dev/null)
      # shellcheck disable=SC2086 # the flags, as systemd splits them
      "${DIR}/bin/kubelet" --bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf \
        --kubeconfig=/etc/kubernetes/kubelet.conf --config=/var/lib/kubelet/config.yaml ${args} \
        >>"${DIR}/logs/kubelet.log" 2>&1 &
      echo $! >"${DIR}/kubelet.pid"
      wait $! || true
    fi
    sleep 1
  done
}
kubelet_loop &
echo $! >"${DIR}/kubelet-loop.pid"
restart_kubelet() { kill "$(cat "${DIR}/kubelet.pid")"; sleep 2; wait_for 60 "the kubelet" curl -fsS http://127.0.0.1:10248/healthz; }

cat >"${DIR}/kubeadm.yaml" <<EOF
apiVersion: kubeadm.k8s.io/v1beta4
kind: InitConfiguration
localAPIEndpoint:
  advertiseAddress: ${NODE_IP}
nodeRegistration:
  name: ${NODE}
  criSocket: unix://${CONTAINERD_ADDRESS}
  kubeletExtraArgs:
  - name: node-ip
    value: ${NODE_IP}
---
apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
kubernetesVersion: ${STOCK}
imageRepository: ${REGISTRY}
clusterName: ${NODE}
networking:
  podSubnet: ${POD_SUBNET}
etcd:
  local:
    dataDir: ${DIR}/etcd
---
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: cgroupfs
failCgroupV1: false
podLogsDir: ${NODE_DIR}/pod-logs
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  memory.available: 100Mi
  nodefs.available: 1%
  imagefs.available: 1%
---
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
conntrack:
  maxPerCore: 0
EOF

# What this machine cannot give kubeadm's preflight (docs/operations.md, "Preflight"): cgroup v2.
# On cgroup v1, kubeadm asks for failCgroupV1: false (above) and this check skipped; no systemd
# and containerd 1.6 (no RuntimeConfig) are only warnings.
IGNORED=SystemVerification

step "3. kubeadm init: stock ${STOCK}, images from ${REGISTRY}"
start=${SECONDS}
kubeadm config images pull --config "${DIR}/kubeadm.yaml" >"${DIR}/logs/images-pull.log" 2>&1 ||
  fail "kubeadm config images pull: ${DIR}/logs/images-pull.log"
mkdir -p /etc/kubernetes && touch /etc/kubernetes/.configsnapshot-test-kubeadm
kubeadm init --config "${DIR}/kubeadm.yaml" --ignore-preflight-errors="${IGNORED}" >"${DIR}/logs/init.log" 2>&1 ||
  { tail -30 "${DIR}/logs/init.log" >&2; fail "kubeadm init: ${DIR}/logs/init.log"; }
log "kubeadm init: $((SECONDS - start)) s"
kubectl taint nodes "${NODE}" node-role.kubernetes.io/control-plane- >/dev/null
kubectl wait --for=condition=Ready "node/${NODE}" --timeout=180s >/dev/null || fail "node ${NODE} not Ready"

# checks WANT_VERSION: docs/operations.md's Checks, on each kube-apiserver (not through a load
# balancer), for a control plane at WANT_VERSION (the release: the gate on, the plugin loaded, the
# writer granted; stock: none of it).
checks() {
  local want=$1 server version gate writer controller flags
  wait_for 180 "the control plane's pods at ${want}" control_plane_at "${want}"
  for server in "${APISERVERS[@]}"; do
    version=$(kubectl --server "${server}" version -o json | jq -r .serverVersion.gitVersion)
    [[ ${version} == "${want}" ]] || fail "${server} says ${version}, want ${want}"
    gate=$(kubectl --server "${server}" get --raw /metrics | grep '^kubernetes_feature_enabled{name="WorkloadConfigSnapshot"' || true)
    writer=$(kubectl --server "${server}" auth can-i --list -n default --as=system:serviceaccount:kube-system:config-snapshot-writer | grep -E '^(configmaps|secrets) ' || true)
    controller=$(kubectl --server "${server}" auth can-i --list -n default --as=system:serviceaccount:kube-system:deployment-controller | grep -E '^(configmaps|secrets) ' || true)
    [[ -z ${controller} ]] || fail "${server}: deployment-controller may ${controller}"
    if [[ ${want} == "${RELEASE}" ]]; then
      [[ ${gate} == *"} 1" ]] || fail "${server}: the gate is not on (${gate:-no metric})"
      if ! grep -q '^configmaps *\[\] *\[\] *\[create delete patch\]' <<<"${writer}" ||
        ! grep -q '^secrets *\[\] *\[\] *\[create delete patch\]' <<<"${writer}"; then
        fail "${server}: the writer's grant is not there: ${writer:-nothing}"
      fi
    else
      [[ -z ${gate} ]] || fail "${server}: a stock server with the gate metric: ${gate}"
      [[ -z ${writer} ]] || fail "${server}: a stock server grants the writer ${writer}"
    fi
    log "${server}: ${version}; gate metric: ${gate:-absent}; writer may: $(tr -s '\n ' ' ' <<<"${writer:-nothing}")"
  done
  flags=$(kubectl -n kube-system get pod -l component=kube-controller-manager -o jsonpath='{.items[0].spec.containers[0].command}')
  [[ ${flags} == *--use-service-account-credentials=true* ]] || fail "kube-controller-manager runs without --use-service-account-credentials"
  if [[ ${want} == "${RELEASE}" ]]; then
    [[ ${flags} == *WorkloadConfigSnapshot=true* ]] || fail "kube-controller-manager runs without the gate: ${flags}"
    kubectl -n kube-system logs "kube-apiserver-${NODE}" | grep 'validating admission controller(s) successfully' | grep -q ConfigSnapshotRestriction ||
      fail "kube-apiserver did not load ConfigSnapshotRestriction"
  fi
  log "checks pass for ${want}"
}

# control_plane_at VERSION: the four static pods run VERSION's images and are Ready.
control_plane_at() {
  local c tag=${1//+/_}
  for c in kube-apiserver kube-controller-manager kube-scheduler etcd; do
    [[ $(kubectl -n kube-system get pod "${c}-${NODE}" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}') == True ]] || return 1
  done
  for c in kube-apiserver kube-controller-manager; do
    [[ $(kubectl -n kube-system get pod "${c}-${NODE}" -o jsonpath='{.spec.containers[0].image}') == "${REGISTRY}/${c}:${tag}" ]] || return 1
  done
}

# revisions: every ReplicaSet with its Deployment's revision, to tell whether a step rolled.
revisions() { kubectl get rs -A -o jsonpath='{range .items[*]}{.metadata.namespace}/{.metadata.name}={.metadata.annotations.deployment\.kubernetes\.io/revision}{"\n"}{end}' | sort; }
same_revisions() { [[ $(revisions) == "$(cat "$1")" ]] || { diff "$1" <(revisions) >&2; fail "$2 rolled something"; }; }
# read_config DEPLOYMENT FILE: what the Deployment's pod reads from FILE (the kubelet's files).
read_config() { kubectl -n story exec "deploy/$1" -- cat "$2"; }
rolled_out() { kubectl -n story rollout status "deploy/$1" --timeout=180s >/dev/null || fail "deployment $1 did not roll out"; }
# set_gate on|off: the ClusterConfiguration in kubeadm-config with or without the gate
# (docs/operations.md: the edit, then kubeadm upgrade apply).
set_gate() {
  local config
  config=$(cat "${DIR}/cluster-configuration.yaml")
  if [[ $1 == on ]]; then
    if ! grep -qx 'apiServer: {}' <<<"${config}" || ! grep -qx 'controllerManager: {}' <<<"${config}"; then
      fail "kubeadm-config is not as kubeadm init wrote it"
    fi
    config=$(sed -e 's/^apiServer: {}$/apiServer:\n  extraArgs:\n  - name: feature-gates\n    value: WorkloadConfigSnapshot=true/' \
      -e 's/^controllerManager: {}$/controllerManager:\n  extraArgs:\n  - name: feature-gates\n    value: WorkloadConfigSnapshot=true/' <<<"${config}")
  fi
  kubectl -n kube-system patch configmap kubeadm-config --type merge -p "$(jq -n --arg c "${config}" '{data: {ClusterConfiguration: $c}}')" >/dev/null
}

checks "${STOCK}"
kubectl -n kube-system get configmap kubeadm-config -o jsonpath='{.data.ClusterConfiguration}' >"${DIR}/cluster-configuration.yaml"
busybox=$(image_ref BusyBox)
deployment() { # deployment NAME VOLUMES: a Deployment of one pod that sleeps with VOLUMES mounted under /config, /secret
  cat <<YAML
apiVersion: apps/v1
kind: Deployment
metadata: {name: $1, namespace: story}
spec:
  replicas: 1
  selector: {matchLabels: {app: $1}}
  template:
    metadata: {labels: {app: $1}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: main
        image: ${busybox}
        command: [sleep, "2147483647"]
        volumeMounts: [{name: config, mountPath: /config}$([[ $2 == *secret* ]] && echo ', {name: secret, mountPath: /secret}')]
      volumes: $2
YAML
}
kubectl create namespace story >/dev/null
kubectl -n story create configmap app-config --from-literal=greeting=v1 >/dev/null
kubectl -n story create secret generic app-secret --from-literal=password=s1 >/dev/null
deployment before '[{name: config, configMap: {name: app-config}}]' | kubectl apply -f - >/dev/null
rolled_out before
revisions >"${DIR}/revisions-stock.txt"
log "stock ${STOCK} up: $(kubectl get node "${NODE}" -o jsonpath='{.status.nodeInfo.kubeletVersion}') kubelet; Deployment 'before' reads $(read_config before /config/greeting)"

step "4. upgrade to ${RELEASE}: kubeadm-config, kubeadm upgrade apply, drain, kubelet restart, uncordon"
start=${SECONDS}
set_gate on
kubeadm upgrade plan "${RELEASE}" >"${DIR}/logs/upgrade-plan.log" 2>&1 || { tail -20 "${DIR}/logs/upgrade-plan.log" >&2; fail "kubeadm upgrade plan"; }
kubeadm upgrade apply "${RELEASE}" -y --ignore-preflight-errors="${IGNORED}" >"${DIR}/logs/upgrade-apply.log" 2>&1 ||
  { tail -30 "${DIR}/logs/upgrade-apply.log" >&2; fail "kubeadm upgrade apply ${RELEASE}"; }
kubectl drain "${NODE}" --ignore-daemonsets --delete-emptydir-data --timeout=180s >"${DIR}/logs/drain.log" 2>&1 || fail "drain: ${DIR}/logs/drain.log"
restart_kubelet
kubectl uncordon "${NODE}" >/dev/null
rolled_out before
log "upgrade: $((SECONDS - start)) s"
checks "${RELEASE}"
same_revisions "${DIR}/revisions-stock.txt" "the upgrade"

step "5. stock kube-scheduler, kube-proxy, kubelet and kubeadm under the patched control plane"
sed -i "s|image: ${REGISTRY}/kube-scheduler:.*|image: ${REGISTRY}/kube-scheduler:${STOCK}|" /etc/kubernetes/manifests/kube-scheduler.yaml
kubectl -n kube-system set image daemonset/kube-proxy "kube-proxy=${REGISTRY}/kube-proxy:${STOCK}" >/dev/null
kubectl -n kube-system rollout status daemonset/kube-proxy --timeout=180s >/dev/null || fail "stock kube-proxy did not roll out"
scheduler_stock() {
  [[ $(kubectl -n kube-system get pod "kube-scheduler-${NODE}" -o jsonpath='{.spec.containers[0].image} {.status.containerStatuses[0].ready}') == "${REGISTRY}/kube-scheduler:${STOCK} true" ]]
}
wait_for 180 "the stock kube-scheduler" scheduler_stock
for c in kube-apiserver kube-controller-manager kube-scheduler; do
  log "${c}: $(kubectl -n kube-system get pod "${c}-${NODE}" -o jsonpath='{.spec.containers[0].image}')"
done
log "kube-proxy: $(kubectl -n kube-system get daemonset kube-proxy -o jsonpath='{.spec.template.spec.containers[0].image}'), kubelet $(kubectl get node "${NODE}" -o jsonpath='{.status.nodeInfo.kubeletVersion}'), kubeadm $(kubeadm version -o short)"

step "6. the snapshot story with stock kubectl ${STOCK}"
deployment app '[{name: config, configMap: {name: app-config, snapshot: true, watch: true}}, {name: secret, secret: {secretName: app-secret, snapshot: true}}]' |
  kubectl apply -f - >/dev/null
deployment watched '[{name: config, configMap: {name: app-config, snapshot: true, watch: true}}]' | kubectl apply -f - >/dev/null
rolled_out app
rolled_out watched
mounted=$(kubectl -n story get pod -l app=app -o jsonpath='{.items[0].spec.volumes[0].configMap.name}')
[[ ${mounted} != app-config && $(read_config app /config/greeting) == v1 && $(read_config app /secret/password) == s1 ]] ||
  fail "revision 1 of app does not read its snapshot (${mounted})"
log "revision 1 mounts ${mounted}, reads v1 and the Secret's copy"
kubectl -n story patch configmap app-config -p '{"data":{"greeting":"v2"}}' >/dev/null
revision() { kubectl -n story get deploy "$1" -o jsonpath='{.metadata.annotations.deployment\.kubernetes\.io/revision}'; }
at_revision() { [[ $(revision "$1") == "$2" ]]; }
wait_for 120 "the watched edit to roll app out" at_revision app 2
rolled_out app
[[ $(read_config app /config/greeting) == v2 ]] || fail "revision 2 does not read v2"
log "the edit rolled app to revision 2, which reads v2"
kubectl -n story rollout undo deployment/app >/dev/null 2>&1
wait_for 120 "the undo" at_revision app 3
rolled_out app
[[ $(read_config app /config/greeting) == v1 && $(kubectl -n story get configmap app-config -o jsonpath='{.data.greeting}') == v2 ]] ||
  fail "the undo does not bring back v1"
log "kubectl rollout undo: app reads v1 again while app-config holds v2"
wait_for 120 "watched to roll" at_revision watched 2
rolled_out watched

# Stolen tokens: a client with nothing but the token (no client certificate).
as_token() {
  local token
  token=$(kubectl -n kube-system create token "$1" --duration=10m)
  shift
  "${FORK_BIN}/stock/kubectl" --kubeconfig=/dev/null --server "${APISERVERS[0]}" --certificate-authority=/etc/kubernetes/pki/ca.crt --token "${token}" "$@"
}
refused() { local out; out=$(as_token "$@" 2>&1) && fail "allowed: $* (${out})"; grep -qi forbidden <<<"${out}" || fail "$*: ${out}"; }
refused deployment-controller -n story create configmap stolen --from-literal=k=v
refused deployment-controller -n story get secret app-secret
refused config-snapshot-writer -n story create configmap stolen --from-literal=k=v
refused config-snapshot-writer -n story patch deployment app -p '{"spec":{"replicas":2}}'
refused config-snapshot-writer -n story patch replicaset "$(kubectl -n story get rs -l app=app -o jsonpath='{.items[0].metadata.name}')" -p '{"spec":{"replicas":2}}'
log "stolen tokens: deployment-controller writes no ConfigMap and reads no Secret; config-snapshot-writer writes no plain ConfigMap, edits no Deployment or ReplicaSet"

# The scrape of docs/operations.md (Monitoring): monitoring/scrape's RBAC, and a token of its
# service account reading kube-controller-manager's /metrics where kubeadm binds it.
kubectl create namespace monitoring >/dev/null
kubectl -n monitoring create serviceaccount prometheus >/dev/null
kubectl apply -f "${FORK_ROOT}/monitoring/scrape/kube-controller-manager-metrics.yaml" >"${DIR}/logs/scrape-apply.log" 2>&1 ||
  grep -q 'no matches for kind "ServiceMonitor"' "${DIR}/logs/scrape-apply.log" || fail "monitoring/scrape: ${DIR}/logs/scrape-apply.log"
series=$(curl -fsSk -H "Authorization: Bearer $(kubectl -n monitoring create token prometheus)" https://127.0.0.1:10257/metrics | grep -c '^workload_config_snapshot_') ||
  fail "the scrape token does not read kube-controller-manager's metrics"
log "scrape: monitoring/prometheus's token reads ${series} workload_config_snapshot_* series from 127.0.0.1:10257"

step "7. downgrade to stock ${STOCK}: kubeadm-config without the gate, kubeadm upgrade apply"
start=${SECONDS}
set_gate off
kubeadm upgrade apply "${STOCK}" -y --ignore-preflight-errors="${IGNORED}" >"${DIR}/logs/downgrade-apply.log" 2>&1 ||
  { tail -30 "${DIR}/logs/downgrade-apply.log" >&2; fail "kubeadm upgrade apply ${STOCK}"; }
restart_kubelet
log "downgrade: $((SECONDS - start)) s"
checks "${STOCK}"
wait_for 180 "watched to roll once to its live ConfigMap" at_revision watched 3
rolled_out watched
# Every pod of watched (the old one gone) mounts app-config itself and reads v2.
watched_live() {
  [[ $(kubectl -n story get pod -l app=watched -o jsonpath='{range .items[*]}{.spec.volumes[0].configMap.name} {end}') == "app-config " &&
    $(read_config watched /config/greeting) == v2 ]]
}
wait_for 120 "watched to read its live ConfigMap" watched_live
sleep 15
[[ $(revision app) == 3 && $(revision before) == 1 && $(revision watched) == 3 && $(read_config app /config/greeting) == v1 ]] ||
  fail "the downgrade rolled more than watched: app $(revision app), before $(revision before), watched $(revision watched)"
log "downgrade: watched rolled once to app-config (v2); app (pinned by the undo) and before rolled nothing; snapshots: $(kubectl -n story get configmap -l configsnapshot.apps.kubernetes.io/snapshot=true --no-headers | wc -l)"

step "8. PASS: kubeadm init ${STOCK}, upgrade to ${RELEASE}, the story, downgrade to ${STOCK}"
