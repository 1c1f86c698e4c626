#!/usr/bin/env bash
# make kind-image: a kind node image of the patched release, built by kind itself from the
# materialized tree (kind build node-image --type source). Needs a Docker engine and access to the
# images that upstream's build uses (kube-cross, go-runner, kindest/base); on a machine without a
# Docker engine it stops before doing anything.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

IMAGE=${KIND_IMAGE:-kindest/node:${KUBE_VERSION}-configsnapshot}
if ! command -v docker >/dev/null 2>&1 || ! docker info >/dev/null 2>&1; then
  die "building a kind node image needs a running Docker engine, and none answers here ('docker info' fails). Run 'make kind-image' on a machine with Docker."
fi
"${FORK_ROOT}/hack/materialize.sh"
want=$(cd "${FORK_ROOT}" && go list -m -f '{{.Version}}' sigs.k8s.io/kind)
log "building kind ${want}"
(cd "${FORK_ROOT}" && go build -o "${FORK_BIN}/kind" sigs.k8s.io/kind)

# Upstream's build reads the version from git; the materialized tree's history is ours, so give it
# the version explicitly (the same one hack/build.sh stamps).
version_file=$(mktemp)
trap 'rm -f "${version_file}"' EXIT
cat >"${version_file}" <<VERSION
KUBE_GIT_COMMIT=$(git -C "${KUBE_TREE}" rev-parse HEAD)
KUBE_GIT_TREE_STATE=clean
KUBE_GIT_VERSION=$(fork_version)
KUBE_GIT_MAJOR=1
KUBE_GIT_MINOR=${KUBE_VERSION#v1.}
VERSION
sed -i 's/^KUBE_GIT_MINOR=\([0-9]*\).*/KUBE_GIT_MINOR=\1/' "${version_file}"
log "kind build node-image ${IMAGE}"
KUBE_GIT_VERSION_FILE=${version_file} "${FORK_BIN}/kind" build node-image --type source "${KUBE_TREE}" --image "${IMAGE}"
cat <<MSG

Built ${IMAGE}. Start a cluster with the feature gate on:
  kind create cluster --name snapshots --image ${IMAGE} --config ${FORK_ROOT}/kind/config.yaml
MSG
