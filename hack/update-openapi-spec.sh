#!/usr/bin/env bash
# Regenerate api/openapi-spec (v2 and v3) and api/discovery in the tree from a real, patched
# kube-apiserver and etcd, with the flags and jq filters of upstream's hack/update-openapi-spec.sh.
# Upstream's script builds kube-apiserver with 'make' (a second, static build of the whole
# apiserver); this one builds kube-apiserver with hack/build.sh (incremental: the spec must come
# from the tree as it is now, never from an older binary) and uses the etcd of hack/install-etcd.sh.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

for tool in jq curl openssl; do
  command -v "${tool}" >/dev/null 2>&1 || die "${tool} is required to regenerate api/openapi-spec (see docs/development.md)"
done
"${FORK_ROOT}/hack/build.sh" kube-apiserver
"${FORK_ROOT}/hack/install-etcd.sh"

TMP_DIR=$(mktemp -d)
ETCD_PID='' APISERVER_PID=''
cleanup() {
  local pid
  for pid in ${APISERVER_PID} ${ETCD_PID}; do
    kill "${pid}" 2>/dev/null || true
    wait "${pid}" 2>/dev/null || true
  done
  rm -rf "${TMP_DIR}"
}
trap cleanup EXIT

# free_port: a TCP port on 127.0.0.1 that nothing listens on (bash connects to it and is refused).
free_port() {
  local port
  for _ in $(seq 1 100); do
    port=$((20000 + RANDOM % 20000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/${port}") 2>/dev/null; then
      echo "${port}"
      return 0
    fi
  done
  die "found no free port on 127.0.0.1"
}
ETCD_PORT=$(free_port)
# The port appears in api/discovery/api.json: keep upstream's 8050.
API_PORT=${API_PORT:-8050}
API_HOST=127.0.0.1

"${FORK_BIN}/etcd" --data-dir "${TMP_DIR}/etcd" --listen-client-urls "http://127.0.0.1:${ETCD_PORT}" \
  --advertise-client-urls "http://127.0.0.1:${ETCD_PORT}" --listen-peer-urls http://127.0.0.1:0 \
  --log-level=warn >"${TMP_DIR}/etcd.log" 2>&1 &
ETCD_PID=$!

echo "dummy_token,admin,admin" >"${TMP_DIR}/tokenauth.csv"
openssl genrsa -out "${TMP_DIR}/sa.key" 2048 2>/dev/null
log "starting kube-apiserver"
KUBE_APISERVER_STRICT_REMOVED_API_HANDLING_IN_ALPHA=true "${FORK_BIN}/kube-apiserver" \
  --bind-address="${API_HOST}" \
  --secure-port="${API_PORT}" \
  --etcd-servers="http://127.0.0.1:${ETCD_PORT}" \
  --advertise-address="10.10.10.10" \
  --cert-dir="${TMP_DIR}/certs" \
  --feature-gates=AllAlpha=true,AllBeta=true,OpenAPIEnums=false \
  --runtime-config="api/all=true" \
  --token-auth-file="${TMP_DIR}/tokenauth.csv" \
  --authorization-mode=RBAC \
  --service-account-key-file="${TMP_DIR}/sa.key" \
  --service-account-lookup=true \
  --service-account-issuer="https://kubernetes.default.svc" \
  --service-account-signing-key-file="${TMP_DIR}/sa.key" \
  --enable-logs-handler=true \
  --v=2 \
  --service-cluster-ip-range="10.0.0.0/24" >"${TMP_DIR}/apiserver.log" 2>&1 &
APISERVER_PID=$!

get() { curl -kfsS --max-time 60 -H 'Authorization: Bearer dummy_token' "$@"; }
for _ in $(seq 1 120); do
  if get "https://${API_HOST}:${API_PORT}/healthz" >/dev/null 2>&1; then break; fi
  kill -0 "${APISERVER_PID}" 2>/dev/null || { tail -20 "${TMP_DIR}/apiserver.log" >&2; die "kube-apiserver exited"; }
  sleep 1
done
get "https://${API_HOST}:${API_PORT}/healthz" >/dev/null || { tail -20 "${TMP_DIR}/apiserver.log" >&2; die "kube-apiserver did not become healthy"; }

cd "${KUBE_TREE}"
DISCOVERY_ROOT_DIR=api/discovery
OPENAPI_ROOT_DIR=api/openapi-spec
BASE="https://${API_HOST}:${API_PORT}"

log "updating ${DISCOVERY_ROOT_DIR} and ${OPENAPI_ROOT_DIR}"
rm -fr "${DISCOVERY_ROOT_DIR}"
mkdir -p "${DISCOVERY_ROOT_DIR}"
get -H 'Accept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' "${BASE}/apis" | jq -S . >"${DISCOVERY_ROOT_DIR}/aggregated_v2.json"

rm -f "${OPENAPI_ROOT_DIR}/swagger.json"
get -w "\n" "${BASE}/openapi/v2" | jq -S '.info.version="unversioned"' >"${OPENAPI_ROOT_DIR}/swagger.json"

rm -rf "${OPENAPI_ROOT_DIR}/v3"
mkdir -p "${OPENAPI_ROOT_DIR}/v3"
get -w "\n" "${BASE}/openapi/v3" | jq -r '.paths | to_entries | .[].key' | while read -r group; do
  file="${group}_openapi.json"
  get -w "\n" "${BASE}/openapi/v3/{${group}}" | jq -S '.info.version="unversioned"' >"${OPENAPI_ROOT_DIR}/v3/${file//\//__}"
  if [[ ${group} == "api"* ]]; then
    dfile="${group}.json"
    get "${BASE}/{${group}}" | jq -S . >"${DISCOVERY_ROOT_DIR}/${dfile//\//__}"
  fi
done
log "done"
