#!/usr/bin/env bash
# Regenerate the objects that an unpatched Kubernetes stores for a Deployment that mounts
# ConfigMaps and Secrets (hack/stock-fixtures/main.go, run in a worktree of the tree's pristine
# base commit) into the tree, where the Deployment controller's tests check that the patched
# controller leaves them alone. Commit the result in the tree like any other change.
set -o errexit -o nounset -o pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

"${FORK_ROOT}/hack/build-stock-kubectl.sh" --worktree-only
STOCK_TREE=${FORK_OUTPUT}/stock-kubernetes
out=${KUBE_TREE}/pkg/controller/deployment/testdata/stock-${KUBE_VERSION}-deployment.json
dir=$(mktemp -d "${STOCK_TREE}/stockfixtures.XXXXXX")
trap 'rm -rf "${dir}"' EXIT
cp "${FORK_ROOT}/hack/stock-fixtures/main.go" "${dir}/main.go"
mkdir -p "$(dirname "${out}")"
log "generating ${out#"${KUBE_TREE}"/} with the controller of ${KUBE_VERSION}"
(cd "${STOCK_TREE}" && go run "./$(basename "${dir}")/main.go") >"${out}"
