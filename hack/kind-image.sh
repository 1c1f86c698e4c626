#!/usr/bin/env bash
# make kind-image: a kind node image of the patched release (KIND_IMAGE, default
# kindest/node:v1.37.1-configsnapshot), built by kind's own node-image builder (`kind build
# node-image --type file`) from the binaries this repository builds, without upstream's
# dockerized build:
#   kubernetes-server-linux-amd64.tar.gz   kubernetes/version, server/bin/{kubeadm,kubelet,kubectl}
#                                          and the image archives of kube-apiserver,
#                                          kube-controller-manager, kube-scheduler and kube-proxy,
#                                          tagged as upstream tags them for this version
# Images hold the binaries with the libraries they link; kube-proxy's holds the node's Debian
# system too (it runs iptables).
#
# KIND_IMAGES chooses where everything else comes from:
#   upstream  kind's own base image and the images kind pulls (etcd, coredns, pause, kindnetd,
#             local-path-provisioner): a machine with Docker and registry access
#   local     no registry: a base image assembled from Debian's packages (hack/kind/base-rootfs.sh)
#             and those images built here, packed into the kube-proxy archive so that kind loads
#             them instead of pulling: etcd (go.mod's), coredns (the version kubeadm wants, from
#             the Go module proxy), pause (agnhost pause), and two stand-ins: kindnetd
#             (hack/kind/kindnet: CNI configuration and routes from the nodes' pod CIDRs) and
#             local-path-provisioner (provisions nothing; PersistentVolumeClaims stay Pending)
#   auto      (default) upstream when registry.k8s.io answers, else local
# Starts a Docker engine when none answers (hack/lib/kind.sh); make kind-down stops it.
#
# KIND_STOCK=1 builds the same image from stock components instead (hack/build-stock-kubectl.sh:
# the base commit, none of our patches; KIND_IMAGE kindest/node:v1.37.1-stock), to compare with.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
source "${FORK_ROOT}/hack/lib/images.sh"
source "${FORK_ROOT}/hack/lib/kind.sh"

mode=${KIND_IMAGES:-auto}
if [[ ${mode} == auto ]]; then
  mode=local
  if timeout 5 bash -c '</dev/tcp/registry.k8s.io/443' 2>/dev/null; then mode=upstream; fi
fi
[[ ${mode} == local || ${mode} == upstream ]] || die "KIND_IMAGES is auto, local or upstream, not ${mode}"
log "kind node image ${KIND_IMAGE} (KIND_IMAGES=${mode})"

"${FORK_ROOT}/hack/materialize.sh"
components=(kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet kubeadm kube-proxy)
if [[ -n ${KIND_STOCK:-} ]]; then
  "${FORK_ROOT}/hack/build-stock-kubectl.sh" "${components[@]}"
  bin=${FORK_BIN}/stock version=${KUBE_VERSION}
else
  "${FORK_ROOT}/hack/build.sh" "${components[@]}"
  bin=${FORK_BIN} version=$(cat "${FORK_BIN}/VERSION")
fi
kind_build
docker_up
tag=${version//+/_}
kind_dir=$(cd "${FORK_ROOT}" && go list -m -f '{{.Dir}}' sigs.k8s.io/kind)
const() { sed -n "s/^const $1 = \"\(.*\)\"/\1/p" "${kind_dir}/pkg/build/nodeimage/$2"; }

work=$(mktemp -d)
# shellcheck disable=SC2064 # expand now
trap "rm -rf '${work}'" EXIT
bits=${work}/kubernetes/server/bin
mkdir -p "${bits}"
echo "${version}" >"${work}/kubernetes/version"
cp "${bin}"/{kubeadm,kubelet,kubectl} "${bits}/"

# The node's root file system: kind's base image, or the one assembled here (cached by the
# script's content, ~2 minutes).
base_rootfs_tar() {
  local key out
  key=$(sha256sum <"${FORK_ROOT}/hack/kind/base-rootfs.sh" | cut -c1-12)
  out=${KIND_WORK}/base-rootfs-${key}.tar
  if [[ ! -f ${out} ]]; then
    log "assembling kind's base file system from Debian packages (hack/kind/base-rootfs.sh)"
    apt_install mmdebstrap jq
    # mmdebstrap writes a tarball for a name ending in .tar; its output goes to the log.
    "${FORK_ROOT}/hack/kind/base-rootfs.sh" "${out%.tar}.partial.tar" "${kind_dir}" >&2
    mv "${out%.tar}.partial.tar" "${out}"
  fi
  echo "${out}"
}

mkdir -p "${KIND_WORK}"
log "control-plane images (tag ${tag})"
for c in kube-apiserver kube-controller-manager kube-scheduler; do
  component_image "${bin}/${c}" "${bits}/${c}.tar" "registry.k8s.io/${c}:${tag}"
done
if [[ ${mode} == local ]]; then
  # kube-proxy on the node's own Debian system, which has iptables and conntrack.
  mkdir -p "${work}/kube-proxy"
  tar -C "${work}/kube-proxy" -xf "$(base_rootfs_tar)"
  cp "${bin}/kube-proxy" "${work}/kube-proxy/usr/local/bin/"
  write_image "${work}/kube-proxy" "${work}/kube-proxy.tar" '"Entrypoint":["/usr/local/bin/kube-proxy"]' "registry.k8s.io/kube-proxy:${tag}"
else
  component_image "${bin}/kube-proxy" "${work}/kube-proxy.tar" "registry.k8s.io/kube-proxy:${tag}"
fi

base_image=
if [[ ${mode} == upstream ]]; then
  mv "${work}/kube-proxy.tar" "${bits}/kube-proxy.tar"
else
  log "the images kind would pull, built here"
  "${FORK_ROOT}/hack/install-etcd.sh"
  "${FORK_ROOT}/hack/node-images.sh" build-if-missing
  etcd_tag=$(kubeadm_const DefaultEtcdVersion) coredns_tag=$(kubeadm_const CoreDNSVersion)
  pause_ref=$(sed -n 's/^\s*sandbox_image = "\(.*\)"/\1/p' "${kind_dir}/images/base/files/etc/containerd/config.toml")
  etcd_image "${work}/etcd.tar" "registry.k8s.io/etcd:${etcd_tag}"
  coredns_image "${work}/coredns.tar" "registry.k8s.io/coredns/coredns:${coredns_tag}"
  pause_image "${work}/pause.tar" "${pause_ref}"

  log "building the kindnetd stand-in (hack/kind/kindnet)"
  mkdir -p "${KUBE_TREE}/test/e2e_fork/kindnet"
  cp "${FORK_ROOT}/hack/kind/kindnet/main.go" "${KUBE_TREE}/test/e2e_fork/kindnet/"
  grep -qx '/test/e2e_fork/' "${KUBE_TREE}/.git/info/exclude" 2>/dev/null || echo '/test/e2e_fork/' >>"${KUBE_TREE}/.git/info/exclude"
  (cd "${KUBE_TREE}" && CGO_ENABLED=0 go build -o "${KIND_WORK}/kindnet" ./test/e2e_fork/kindnet)
  binary_rootfs "${work}/kindnet" "${KIND_WORK}/kindnet"
  write_image "${work}/kindnet" "${work}/kindnet.tar" '"Entrypoint":["/usr/local/bin/kindnet"]' "$(const kindnetdImage const_cni.go)"

  # local-path-provisioner's Deployment runs `local-path-provisioner ...`: a no-op that says so.
  base_rootfs "${work}/local-path"
  mkdir -p "${work}/local-path/usr/local/bin"
  printf '#!/bin/sh\necho "local-path-provisioner stand-in (make kind-image, KIND_IMAGES=local): provisions nothing"\nexec sleep 2147483647\n' \
    >"${work}/local-path/usr/local/bin/local-path-provisioner"
  chmod 0755 "${work}/local-path/usr/local/bin/local-path-provisioner"
  write_image "${work}/local-path" "${work}/local-path.tar" '"Cmd":["local-path-provisioner"]' \
    "$(const storageProvisionerImage const_storage.go)" "$(const storageHelperImage const_storage.go)"

  # kind loads every image that an archive's `repositories` names, and pulls only the others.
  merge_archives "${bits}/kube-proxy.tar" "${work}"/{kube-proxy,etcd,coredns,pause,kindnet,local-path}.tar

  base_image=kindest/base:configsnapshot-$(basename "$(base_rootfs_tar)" .tar | sed 's/^base-rootfs-//')
  if ! docker image inspect "${base_image}" >/dev/null 2>&1; then
    log "base image ${base_image}"
    mkdir -p "${work}/base"
    ln "$(base_rootfs_tar)" "${work}/base/rootfs.tar" 2>/dev/null || cp "$(base_rootfs_tar)" "${work}/base/rootfs.tar"
    printf 'FROM scratch\nADD rootfs.tar /\nENV container=docker\nSTOPSIGNAL SIGRTMIN+3\nENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]\n' >"${work}/base/Dockerfile"
    DOCKER_BUILDKIT=0 docker build -q -t "${base_image}" "${work}/base" >/dev/null
  fi
fi

tar -C "${work}" -czf "${KIND_WORK}/kubernetes-server-linux-${ARCH}.tar.gz" kubernetes
log "kind build node-image --type file ($(du -h "${KIND_WORK}/kubernetes-server-linux-${ARCH}.tar.gz" | cut -f1))"
# kind extracts the tarball under TMPDIR and leaves it there: inside our work directory, which
# the trap removes.
TMPDIR=${work} "${FORK_BIN}/kind" build node-image --type file "${KIND_WORK}/kubernetes-server-linux-${ARCH}.tar.gz" \
  --image "${KIND_IMAGE}" ${base_image:+--base-image "${base_image}"}
echo "${mode}" >"${KIND_WORK}/images-mode"
cat <<MSG

Built ${KIND_IMAGE} (KIND_IMAGES=${mode}). Start a cluster from it${KIND_STOCK:+ (stock: no gate)}:
  ${KIND_STOCK:+KIND_STOCK=1 }make kind-up
MSG
