#!/usr/bin/env bash
# make test-release: the release of make release installed as a platform team would, on a cluster
# whose kubeadm pulls kube-apiserver, kube-controller-manager, kube-scheduler and kube-proxy from a
# registry (imageRepository), not from the node image:
#   1. the release (make release, unless _output/release is there) and its checksums;
#   2. a kind node image with the release's kubelet and kubeadm (make kind-image, at the release's
#      version), then the same image without the control-plane images (KIND_IMAGE-pull);
#   3. Debian's docker-registry on this host, at the kind network's gateway, holding the release's
#      images under their release names (RELEASE_REGISTRY, default localhost:5000/configsnapshot);
#      each node's containerd resolves that name through it (a hosts.toml mounted into the nodes);
#   4. a kind cluster with kubeadm's imageRepository set to RELEASE_REGISTRY (etcd and CoreDNS
#      from the node image), the gate on, the admission plugin on by default;
#   5. checks that the control plane runs the registry's images at the release's version, pulled
#      through the registry (its access log), and the checks of docs/operations.md (the gate on in
#      kube-apiserver and kube-controller-manager, the admission plugin loaded); then the
#      ConfigSnapshot e2e specs against it.
# Then the cluster and the registry are removed (KIND_KEEP=1 keeps them). It is not part of make
# test (11 minutes on this machine, with the release and the binaries built before).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
source "${FORK_ROOT}/hack/lib/kind.sh"

registry=${RELEASE_REGISTRY:-localhost:5000/configsnapshot}
host=${registry%%/*}
version=$(release_version)
tag=${version//+/_}
out=${FORK_OUTPUT}/release
dir=${KIND_WORK}/release-registry
export FORK_VERSION=${version} KIND_IMAGE=kindest/node:${tag}

down() {
  [[ -n ${KIND_KEEP:-} ]] && return
  "${FORK_ROOT}/hack/kind-down.sh" || true
  stop_pidfile "the release registry" "${dir}/pid"
}

[[ -f ${out}/SHA256SUMS ]] || RELEASE_REGISTRY=${registry} "${FORK_ROOT}/hack/release.sh"
(cd "${out}" && sha256sum --quiet -c SHA256SUMS) || die "${out#"${FORK_ROOT}"/} does not match its SHA256SUMS"
grep -q "\"${registry}/kube-apiserver:${tag}\"" <(tar -xOf "${out}/images/kube-apiserver.tar" manifest.json) ||
  die "the release's images are not tagged ${registry}/...:${tag}: run make release RELEASE_REGISTRY=${registry}"

"${FORK_ROOT}/hack/kind-image.sh"
trap down EXIT
docker_up

# The node image without the four control-plane images, so that kubeadm has to pull them: in a
# container of the image, containerd (started as kind's node-image builder starts it) removes
# them, and the container is committed as the image the cluster runs.
log "a node image without the control-plane images (${KIND_IMAGE}-pull)"
id=$(docker run -d --entrypoint=sleep --security-opt seccomp=unconfined "${KIND_IMAGE}" infinity)
docker exec "${id}" bash -c "set -e
  containerd >/dev/null 2>&1 &
  for i in 0 1 2 3 4 5; do ctr version >/dev/null 2>&1 && break; sleep 1; done
  for c in kube-apiserver kube-controller-manager kube-scheduler kube-proxy; do
    ctr -n k8s.io images rm --sync registry.k8s.io/\${c}:${tag} >/dev/null
  done
  left=\$(ctr -n k8s.io images ls -q | grep -E '/kube-(apiserver|controller-manager|scheduler|proxy):' || true)
  kill \$! && wait \$! || true
  [[ -z \${left} ]] || { echo \"the node image still holds \${left}\" >&2; exit 1; }"
docker commit --change 'ENTRYPOINT [ "/usr/local/bin/entrypoint", "/sbin/init" ]' "${id}" "${KIND_IMAGE}-pull" >/dev/null
docker rm -f "${id}" >/dev/null
export KIND_IMAGE=${KIND_IMAGE}-pull
docker network inspect kind >/dev/null 2>&1 || docker network create kind >/dev/null
gateway=$(docker network inspect kind -f '{{range .IPAM.Config}}{{.Gateway}} {{end}}' | tr ' ' '\n' | grep -m1 '\.') ||
  die "no IPv4 gateway on the kind network"
address=${gateway}:5000
stop_pidfile "the release registry" "${dir}/pid"
rm -rf "${dir}"
mkdir -p "${dir}/certs.d/${host}"
log "release registry at ${address}, serving ${registry}"
registry_up "${dir}" "${address}"
for c in kube-apiserver kube-controller-manager kube-scheduler kube-proxy; do
  skopeo copy --quiet --dest-tls-verify=false "docker-archive:${out}/images/${c}.tar" \
    "docker://${address}/${registry#*/}/${c}:${tag}" >/dev/null
done
log "pushed the four control-plane images"
printf 'server = "http://%s"\n\n[host."http://%s"]\n  capabilities = ["pull", "resolve"]\n' "${host}" "${address}" \
  >"${dir}/certs.d/${host}/hosts.toml"

mounts="  extraMounts:
  - hostPath: ${dir}/certs.d
    containerPath: /etc/containerd/certs.d"
cat >"${dir}/kind.yaml" <<EOF
kind: Cluster
apiVersion: kind.x-k8s.io/v1alpha4
featureGates:
  WorkloadConfigSnapshot: true
kubeadmConfigPatches:
- |
  kind: KubeletConfiguration
  failCgroupV1: false
- |
  kind: ClusterConfiguration
  imageRepository: ${registry}
  etcd:
    local:
      imageRepository: registry.k8s.io
  dns:
    imageRepository: registry.k8s.io
containerdConfigPatches:
- |-
  [plugins."io.containerd.grpc.v1.cri"]
    restrict_oom_score_adj = true
- |-
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "/etc/containerd/certs.d"
nodes:
- role: control-plane
${mounts}
- role: worker
${mounts}
EOF
KIND_CONFIG=${dir}/kind.yaml "${FORK_ROOT}/hack/kind-up.sh"
export KUBECONFIG=${KIND_KUBECONFIG}
kubectl=${FORK_BIN}/kubectl
got=$("${kubectl}" version -o json | jq -r .serverVersion.gitVersion)
[[ ${got} == "${version}" ]] || die "the API server is ${got}, not ${version}"
for c in kube-apiserver kube-controller-manager kube-scheduler; do
  image=$("${kubectl}" -n kube-system get pods -l component="${c}" -o jsonpath='{.items[0].spec.containers[0].image}')
  [[ ${image} == "${registry}/${c}:${tag}" ]] || die "${c} runs ${image}, not ${registry}/${c}:${tag}"
done
image=$("${kubectl}" -n kube-system get daemonset kube-proxy -o jsonpath='{.spec.template.spec.containers[0].image}')
[[ ${image} == "${registry}/kube-proxy:${tag}" ]] || die "kube-proxy runs ${image}, not ${registry}/kube-proxy:${tag}"
for c in kube-apiserver kube-controller-manager kube-scheduler kube-proxy; do
  grep -qE "\"(HEAD|GET) /v2/${registry#*/}/${c}/manifests/${tag}[ ?].*\"containerd/" "${dir}/registry.log" ||
    die "the registry's log shows no pull of ${c} by a node's containerd"
done
log "the control plane runs ${version} from ${registry}, pulled by the nodes through ${address}"
# The checks that docs/operations.md gives for after an upgrade (read whole, then matched: grep -q
# would stop reading early, and pipefail would take the writer's SIGPIPE for a failure).
metrics=$("${kubectl}" get --raw /metrics)
grep -qx 'kubernetes_feature_enabled{name="WorkloadConfigSnapshot",stage="ALPHA"} 1' <<<"${metrics}" ||
  die "kube-apiserver does not report the WorkloadConfigSnapshot gate on: $(grep WorkloadConfigSnapshot <<<"${metrics}" || true)"
loaded=$("${kubectl}" -n kube-system logs -l component=kube-apiserver --tail=-1 | grep "validating admission controller(s)" || true)
[[ ${loaded} == *ConfigSnapshotRestriction* ]] || die "kube-apiserver did not load the ConfigSnapshotRestriction admission plugin: ${loaded}"
command=$("${kubectl}" -n kube-system get pods -l component=kube-controller-manager -o jsonpath='{.items[0].spec.containers[0].command}')
[[ ${command} == *WorkloadConfigSnapshot=true* ]] || die "kube-controller-manager runs without the WorkloadConfigSnapshot gate: ${command}"
log "the gate is on in kube-apiserver and kube-controller-manager; kube-apiserver loaded ConfigSnapshotRestriction"
E2E_CLUSTER=kind "${FORK_ROOT}/hack/test-e2e.sh"
log "make test-release: PASS"
