# Shared settings of the real node (hack/node-up.sh, hack/node-down.sh). Source it after common.sh.
# shellcheck shell=bash disable=SC2034 # the settings are used by the scripts that source this

NODE_DIR=${LOCAL_DIR}/node
NODE_NAME=${NODE_NAME:-${LOCAL_CLUSTER}-node}
# Pods get addresses from POD_SUBNET on a bridge of this host; the host is their gateway, and
# the gateway address is also the node IP, so the apiserver's connections to the kubelet (exec,
# logs, port-forward) and the host's to pods never leave this machine. (The kernels of these
# machines have no dummy interfaces.)
POD_BRIDGE=${POD_BRIDGE:-csnap-br0}
POD_SUBNET=${POD_SUBNET:-10.213.0.0/24}
NODE_IP=${NODE_IP:-10.213.0.1}
KUBELET_PORT=${KUBELET_PORT:-10250}
KUBELET_HEALTHZ_PORT=${KUBELET_HEALTHZ_PORT:-10248}
CNI_BIN_DIR=${CNI_BIN_DIR:-/usr/lib/cni}
CONTAINERD_ADDRESS=${NODE_DIR}/containerd/containerd.sock
CLUSTER_PKI=${LOCAL_DIR}/kwok/clusters/${LOCAL_CLUSTER}/pki
HOST_STATE=${NODE_DIR}/host-state
# The sysctls that the kubelet and the CNI bridge plugin set.
NODE_SYSCTLS=(vm.overcommit_memory kernel.panic kernel.panic_on_oops net.ipv4.ip_forward)

kubectl_local() { "${FORK_BIN}/kubectl" --kubeconfig "${LOCAL_KUBECONFIG}" "$@"; }

image_ref() { # image_ref NAME: the reference upstream's e2e framework uses for an image
  local name=$1 version
  case ${name} in
    pause) version=$(sed -n 's/.*configs\[Pause\] = Config{list.GcRegistry, "pause", "\(.*\)"}/\1/p' "${KUBE_TREE}/test/utils/image/manifest.go") ;;
    *) version=$(sed -n "s/.*configs\[${name}\] = Config{list.PromoterE2eRegistry, \"[^\"]*\", \"\(.*\)\"}/\1/p" "${KUBE_TREE}/test/utils/image/manifest.go") ;;
  esac
  [[ -n ${version} ]] || die "no image ${name} in test/utils/image/manifest.go"
  case ${name} in
    pause) echo "registry.k8s.io/pause:${version}" ;;
    *) echo "registry.k8s.io/e2e-test-images/$(sed -n "s/.*configs\[${name}\] = Config{list.PromoterE2eRegistry, \"\([^\"]*\)\".*/\1/p" "${KUBE_TREE}/test/utils/image/manifest.go"):${version}" ;;
  esac
}

# wait_for SECONDS WHAT COMMAND...: run COMMAND every second until it succeeds.
wait_for() {
  local seconds=$1 what=$2 i
  shift 2
  for ((i = 0; i < seconds; i++)); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 1
  done
  die "timed out after ${seconds}s waiting for ${what}"
}

# kube_chains: "TOOL TABLE CHAIN" for every KUBE-* chain in the host's iptables and ip6tables.
kube_chains() {
  local tool table
  for tool in iptables ip6tables; do
    command -v "${tool}" >/dev/null || continue
    for table in filter nat mangle; do
      "${tool}" -w -t "${table}" -S 2>/dev/null | awk -v p="${tool} ${table}" '$1 == "-N" && $2 ~ /^KUBE-/ {print p, $2}'
    done
  done
}

# kubepods_cgroups: the pods' cgroup roots in every hierarchy (cgroup v1) or the unified one.
kubepods_cgroups() {
  local dir
  for dir in /sys/fs/cgroup/kubepods /sys/fs/cgroup/*/kubepods; do
    [[ -d ${dir} ]] && echo "${dir}"
  done
  return 0
}

# record_host_state: what the node is about to change on the host, as it is before.
record_host_state() {
  local name
  {
    for name in "${NODE_SYSCTLS[@]}"; do echo "sysctl ${name} $(sysctl -n "${name}")"; done
    kube_chains | sed 's/^/chain /'
    kubepods_cgroups | sed 's/^/cgroup /'
    ip netns list 2>/dev/null | awk '{print "netns", $1}'
    if [[ -d /var/log/containers ]]; then echo "dir /var/log/containers"; fi
    # The kubelet makes its device-plugins directory there whatever its --root-dir.
    if [[ -d /var/lib/kubelet ]]; then echo "dir /var/lib/kubelet"; fi
  } >"${HOST_STATE}"
}

# restore_host_state: put back what record_host_state saw, removing what the node added. Every
# step is best effort and says what it could not undo.
restore_host_state() {
  [[ -f ${HOST_STATE} ]] || return 0
  local kind name value tool table chain rule dir ns
  while read -r kind name value; do
    [[ ${kind} == sysctl ]] || continue
    [[ $(sysctl -n "${name}") == "${value}" ]] || sysctl -q -w "${name}=${value}" || log "could not restore ${name}=${value}"
  done <"${HOST_STATE}"

  kube_chains | while read -r tool table chain; do
    grep -qxF "chain ${tool} ${table} ${chain}" "${HOST_STATE}" && continue
    # First the rules that jump to the chain, then the chain.
    { "${tool}" -w -t "${table}" -S | grep -E -- "-j ${chain}( |$)" || true; } | sed 's/^-A /-D /' | while read -r rule; do
      eval "${tool} -w -t ${table} ${rule}" || log "could not delete ${tool} -t ${table} ${rule}"
    done
  done
  kube_chains | while read -r tool table chain; do
    grep -qxF "chain ${tool} ${table} ${chain}" "${HOST_STATE}" && continue
    if ! "${tool}" -w -t "${table}" -F "${chain}" || ! "${tool}" -w -t "${table}" -X "${chain}"; then
      log "could not delete chain ${chain} of ${tool} -t ${table}"
    fi
  done

  kubepods_cgroups | while read -r dir; do
    grep -qxF "cgroup ${dir}" "${HOST_STATE}" && continue
    find "${dir}" -depth -type d -exec rmdir {} + 2>/dev/null || true
    [[ ! -d ${dir} ]] || log "could not remove cgroup ${dir} (processes left in it?)"
  done

  ip netns list 2>/dev/null | awk '{print $1}' | while read -r ns; do
    if [[ ${ns} == cni-* ]] && ! grep -qxF "netns ${ns}" "${HOST_STATE}"; then
      ip netns delete "${ns}" || log "could not delete network namespace ${ns}"
    fi
  done
  if ip link show "${POD_BRIDGE}" >/dev/null 2>&1; then ip link delete "${POD_BRIDGE}"; fi

  if [[ -d /var/log/containers ]]; then
    find /var/log/containers -maxdepth 1 -type l -lname "${NODE_DIR}/*" -delete
    grep -qxF "dir /var/log/containers" "${HOST_STATE}" || rmdir /var/log/containers 2>/dev/null || true
  fi
  if [[ -d /var/lib/kubelet ]] && ! grep -qxF "dir /var/lib/kubelet" "${HOST_STATE}"; then
    rm -f /var/lib/kubelet/device-plugins/kubelet.sock
    rmdir /var/lib/kubelet/device-plugins /var/lib/kubelet 2>/dev/null || log "could not remove /var/lib/kubelet (not empty)"
  fi
}

# build_crireset: hack/node/crireset.go, built in the tree (it uses the tree's k8s.io/cri-client)
# in test/e2e_fork, which git ignores there (see hack/test-e2e.sh).
build_crireset() {
  mkdir -p "${KUBE_TREE}/test/e2e_fork/crireset"
  cp "${FORK_ROOT}/hack/node/crireset.go" "${KUBE_TREE}/test/e2e_fork/crireset/main.go"
  grep -qx '/test/e2e_fork/' "${KUBE_TREE}/.git/info/exclude" 2>/dev/null || echo '/test/e2e_fork/' >>"${KUBE_TREE}/.git/info/exclude"
  (cd "${KUBE_TREE}" && go build -o "${FORK_BIN}/crireset" ./test/e2e_fork/crireset)
}

# real_node_unavailable prints why this host cannot run the real node, nothing when it can:
# the bridge of pod_network must be free (another run on this host holds it) and the kernel
# must make bridges (a container without the module or the capability cannot). The probe
# bridge is this shell's own and is deleted at once.
real_node_unavailable() {
  local probe="csnap-p$$" err
  if ip link show "${POD_BRIDGE}" >/dev/null 2>&1; then
    echo "the interface ${POD_BRIDGE} exists already"
    return 0
  fi
  if ! err=$(ip link add "${probe}" type bridge 2>&1); then
    echo "no bridge can be made here: ${err}"
    return 0
  fi
  ip link delete "${probe}"
}

# pod_network: the bridge of the node's pods (POD_BRIDGE, NODE_IP on POD_SUBNET) and its CNI
# configuration in NODE_DIR/cni, addresses kept in NODE_DIR/cni-ipam.
pod_network() {
  local why
  why=$(real_node_unavailable)
  [[ -z ${why} ]] || die "${why} (POD_BRIDGE names another bridge)"
  ip link add "${POD_BRIDGE}" type bridge
  ip addr add "${NODE_IP}/${POD_SUBNET#*/}" dev "${POD_BRIDGE}"
  ip link set "${POD_BRIDGE}" up
  mkdir -p "${NODE_DIR}/cni" "${NODE_DIR}/cni-ipam"
  cat >"${NODE_DIR}/cni/10-configsnapshot.conflist" <<EOT
{
  "cniVersion": "1.0.0",
  "name": "configsnapshot",
  "plugins": [{
    "type": "bridge",
    "bridge": "${POD_BRIDGE}",
    "isGateway": true,
    "ipMasq": false,
    "hairpinMode": true,
    "ipam": {
      "type": "host-local",
      "ranges": [[{"subnet": "${POD_SUBNET}", "gateway": "${NODE_IP}"}]],
      "dataDir": "${NODE_DIR}/cni-ipam"
    }
  }]
}
EOT
}

# start_containerd SANDBOX_IMAGE [CRI_TOML]: Debian's containerd with its root, state, socket
# (CONTAINERD_ADDRESS), configuration and log under NODE_DIR, the CRI's CNI from pod_network,
# its pid in NODE_DIR/containerd.pid; CRI_TOML adds lines to the CRI plugin's section. This
# machine lacks CAP_SYS_RESOURCE, so containerd must not give the sandboxes a negative
# oom_score_adj (restrict_oom_score_adj).
start_containerd() {
  mkdir -p "${NODE_DIR}/containerd" "${NODE_DIR}/logs"
  cat >"${NODE_DIR}/containerd.toml" <<EOT
version = 2
root = "${NODE_DIR}/containerd/root"
state = "${NODE_DIR}/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs"]
[grpc]
  address = "${CONTAINERD_ADDRESS}"
[ttrpc]
  address = "${CONTAINERD_ADDRESS}.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "${NODE_DIR}/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$1"
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "${CNI_BIN_DIR}"
    conf_dir = "${NODE_DIR}/cni"
${2:-}
EOT
  log "starting containerd $(containerd --version | awk '{print $3}')"
  containerd --config "${NODE_DIR}/containerd.toml" >"${NODE_DIR}/logs/containerd.log" 2>&1 &
  echo $! >"${NODE_DIR}/containerd.pid"
  wait_for 30 "containerd to answer" ctr --address "${CONTAINERD_ADDRESS}" version
}
