#!/usr/bin/env bash
# make release: the release a platform team installs, in _output/release/:
#   kubernetes-server-linux-<arch>.tar.gz   laid out as upstream's server tarball: kubernetes/version,
#                                           kubernetes/LICENSE, kubernetes/server/bin/ with
#                                           kube-apiserver, kube-controller-manager, kube-scheduler,
#                                           kube-proxy, kubelet, kubeadm, kubectl, and the image
#                                           archives of the four control-plane components with
#                                           their .docker_tag files
#   images/<component>.tar                  the same image archives (docker-archive, which docker
#                                           load, ctr images import, skopeo and kind take), tagged
#                                           <RELEASE_REGISTRY>/<component>:<tag>
#   kind-node-image-<arch>.tar              the kind node image kindest/node:<tag> (make kind-image,
#                                           docker save; RELEASE_KIND=0 skips it)
#   sbom/<artifact>.spdx.json               an SPDX SBOM of the tarball's tree and of each image
#                                           (syft, pinned below, built from the Go module proxy)
#   RELEASE-NOTES.md                        what the release adds to v1.37.1, from the series
#   monitoring/alerts.yaml, dashboard.json  Prometheus alert rules and a Grafana dashboard of the
#                                           feature's metrics (tested by make test-monitoring)
#   monitoring/scrape/                      the scrape job, RBAC and ServiceMonitor for
#                                           kube-controller-manager on kubeadm
#   SHA256SUMS                              of every file above
# The version is v1.37.1+configsnapshot.N, N from hack/RELEASE; the image tag is the one kubeadm
# derives from it ('+' becomes '_'). RELEASE_REGISTRY (default localhost:5000/configsnapshot, never
# upstream's registry.k8s.io) is where a cluster's kubeadm pulls them from (imageRepository).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
source "${FORK_ROOT}/hack/lib/images.sh"
source "${FORK_ROOT}/hack/lib/kind.sh"

registry=${RELEASE_REGISTRY:-localhost:5000/configsnapshot}
[[ ${registry} != registry.k8s.io* && ${registry} != k8s.gcr.io* ]] ||
  die "RELEASE_REGISTRY ${registry} is upstream's: name a registry of your own"
version=$(release_version)
[[ ${version} =~ ^v[0-9]+\.[0-9]+\.[0-9]+\+configsnapshot\.[0-9]+$ ]] ||
  die "hack/RELEASE must hold a release number: ${version} is not v1.37.1+configsnapshot.N"
tag=${version//+/_}
out=${FORK_OUTPUT}/release
components=(kube-apiserver kube-controller-manager kube-scheduler kube-proxy kubelet kubeadm kubectl)
images=(kube-apiserver kube-controller-manager kube-scheduler kube-proxy)
SYFT_VERSION=v1.57.1
syft=${FORK_OUTPUT}/tools/syft-${SYFT_VERSION}/syft

# sbom SOURCE OUT: the SPDX SBOM of a syft source (docker-archive:FILE, dir:DIR), offline.
sbom() {
  SYFT_CHECK_FOR_APP_UPDATE=false "${syft}" scan "$1" -q -o "spdx-json=$2"
}

# release_notes VERSION REGISTRY TAG: what the release adds to upstream's, from patches/ and the
# release-note blocks of docs/upstream-prs.md.
release_notes() {
  local version=$1 registry=$2 tag=$3 p
  cat <<EOT
# Kubernetes ${version}

Kubernetes ${KUBE_VERSION} with ConfigMap and Secret snapshots for Deployments, DaemonSets and
StatefulSets (README.md, docs/user-guide.md, docs/operations.md). Nothing changes until the alpha feature gate is on:

- feature gate \`WorkloadConfigSnapshot\` (alpha, off by default) on kube-apiserver and
  kube-controller-manager;
- admission plugin \`ConfigSnapshotRestriction\` (validating, on by default);
- kube-controller-manager flags \`--workload-config-snapshot-min-interval\` (default 10s) and
  \`--workload-config-snapshot-max-concurrent-rollouts-per-source\` (default 0, no limit); run it
  with \`--use-service-account-credentials\`.

Images: ${registry}/{kube-apiserver,kube-controller-manager,kube-scheduler,kube-proxy}:${tag}
(kubeadm: \`imageRepository: ${registry}\`, \`kubernetesVersion: ${version}\`).

## Changes

EOT
  awk '/^```release-note$/ {on=1; next} /^```$/ {if (on) print ""; on=0; next} on {print}' \
    "${FORK_ROOT}/docs/upstream-prs.md" | grep -v '^NONE$' | cat -s
  echo "## Patches on ${KUBE_VERSION}"
  echo
  for p in "${FORK_ROOT}"/patches/*.patch; do
    # The subject, unfolded (format-patch folds long ones onto lines that start with a space).
    awk '/^Subject: / {s = $0; while ((getline l) > 0 && l ~ /^ /) s = s l; sub(/^Subject: \[PATCH[^]]*\] /, "", s); print "- " s; exit}' "${p}"
  done
}

"${FORK_ROOT}/hack/materialize.sh"
[[ -z $(git -C "${KUBE_TREE}" status --porcelain --untracked-files=no) ]] ||
  die "the tree has uncommitted changes: a release is built from patches/ only"
log "release ${version} (images ${registry}/<component>:${tag})"
if [[ ! -x ${syft} ]]; then
  log "building syft ${SYFT_VERSION} from the Go module proxy (once; about 2 minutes)"
  GOBIN=$(dirname "${syft}") go install "github.com/anchore/syft/cmd/syft@${SYFT_VERSION}"
fi
FORK_VERSION=${version} "${FORK_ROOT}/hack/build.sh" "${components[@]}"

work=$(mktemp -d)
# shellcheck disable=SC2064 # expand now
trap "rm -rf '${work}'" EXIT
rm -rf "${out}"
mkdir -p "${out}/images" "${out}/sbom" "${work}/kubernetes/server/bin"
bits=${work}/kubernetes/server/bin
for c in "${components[@]}"; do cp "${FORK_BIN}/${c}" "${bits}/"; done
echo "${version}" >"${work}/kubernetes/version"
cp "${KUBE_TREE}/LICENSE" "${work}/kubernetes/LICENSE"

log "image archives"
for c in "${images[@]}"; do
  component_image "${FORK_BIN}/${c}" "${out}/images/${c}.tar" "${registry}/${c}:${tag}"
  sbom "docker-archive:${out}/images/${c}.tar" "${out}/sbom/${c}.spdx.json"
  cp "${out}/images/${c}.tar" "${bits}/${c}.tar"
  echo "${tag}" >"${bits}/${c}.docker_tag"
done

if [[ ${RELEASE_KIND:-1} != 0 ]]; then
  log "kind node image"
  # The Docker engine is stopped afterwards only when this started it.
  started_docker=
  [[ -f ${DOCKERD_DIR}/docker.pid ]] && kill -0 "$(cat "${DOCKERD_DIR}/docker.pid")" 2>/dev/null || started_docker=1
  FORK_VERSION=${version} KIND_IMAGE=kindest/node:${tag} "${FORK_ROOT}/hack/kind-image.sh"
  docker_up
  docker save "kindest/node:${tag}" -o "${out}/kind-node-image-${ARCH}.tar"
  sbom "docker-archive:${out}/kind-node-image-${ARCH}.tar" "${out}/sbom/kind-node-image-${ARCH}.spdx.json"
  [[ -z ${started_docker} ]] || docker_down
fi

log "server tarball"
sbom "dir:${work}/kubernetes" "${out}/sbom/kubernetes-server-linux-${ARCH}.spdx.json"
tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "${work}" -czf "${out}/kubernetes-server-linux-${ARCH}.tar.gz" kubernetes

log "release notes"
release_notes "${version}" "${registry}" "${tag}" >"${out}/RELEASE-NOTES.md"
mkdir -p "${out}/monitoring"
cp "${FORK_ROOT}/monitoring/alerts.yaml" "${FORK_ROOT}/monitoring/dashboard.json" "${out}/monitoring/"
cp -r "${FORK_ROOT}/monitoring/scrape" "${out}/monitoring/"

files=$(cd "${out}" && find . -type f | sed 's|^\./||' | sort)
# shellcheck disable=SC2086 # one name a line, none with spaces
(cd "${out}" && sha256sum ${files} >"${work}/SHA256SUMS") && mv "${work}/SHA256SUMS" "${out}/SHA256SUMS"
log "release ${version} in ${out#"${FORK_ROOT}"/}:"
(cd "${out}" && du -h --apparent-size SHA256SUMS RELEASE-NOTES.md monitoring/* ./*.tar* images/*.tar sbom/*.json) >&2
