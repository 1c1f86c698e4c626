#!/usr/bin/env bash
# What make kind-image, kind-up and kind-down share: where things are, a Docker engine of our own
# when none answers, and the kind binary pinned in go.mod.

KIND_WORK=${FORK_OUTPUT}/kind
# KIND_STOCK=1: the node image and cluster of stock components (the base commit, none of our
# patches, the gate unknown), to compare with (make test-conformance CONFORMANCE_STOCK=1).
if [[ -n ${KIND_STOCK:-} ]]; then
  KIND_CLUSTER=${KIND_CLUSTER:-configsnapshot-stock}
  KIND_IMAGE=${KIND_IMAGE:-kindest/node:${KUBE_VERSION}-stock}
fi
KIND_CLUSTER=${KIND_CLUSTER:-configsnapshot}
# shellcheck disable=SC2034 # for the scripts that source this file
KIND_KUBECONFIG=${KIND_WORK}/kubeconfig
# Docker tags cannot hold '+': the image is named for the release, not the patch set.
KIND_IMAGE=${KIND_IMAGE:-kindest/node:${KUBE_VERSION}-configsnapshot}
DOCKERD_DIR=${KIND_WORK}/dockerd

# kind_build: build kind (the version go.mod pins) into _output/bin/kind.
kind_build() {
  [[ -x ${FORK_BIN}/kind ]] && return 0
  log "building kind $(cd "${FORK_ROOT}" && go list -m -f '{{.Version}}' sigs.k8s.io/kind)"
  (cd "${FORK_ROOT}" && go build -o "${FORK_BIN}/kind" sigs.k8s.io/kind)
}

# docker_up: use the Docker engine that answers, or start Debian's dockerd with its socket, data
# and pid file under _output/kind/dockerd (no host iptables rules, no docker0 bridge), and export
# DOCKER_HOST for it. On hosts whose capability bounding set is incomplete (some VMs), runc is
# wrapped so that privileged containers (kind's nodes) can start (hack/kind/runc-capfix).
docker_up() {
  if [[ -S ${DOCKERD_DIR}/docker.sock ]]; then export DOCKER_HOST=unix://${DOCKERD_DIR}/docker.sock; fi
  if command -v docker >/dev/null && docker info >/dev/null 2>&1; then return 0; fi
  command -v dockerd >/dev/null || {
    log "installing Debian's docker.io"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q docker.io >/dev/null
  }
  mkdir -p "${DOCKERD_DIR}/data" "${DOCKERD_DIR}/exec"
  local runtime=()
  if [[ $(awk '/^CapBnd:/ {print $2}' /proc/self/status) != 000001ffffffffff ]]; then
    runtime=(--add-runtime capfix="${FORK_ROOT}/hack/kind/runc-capfix" --default-runtime capfix)
  fi
  log "starting dockerd (${DOCKERD_DIR#"${FORK_ROOT}"/})"
  nice -n 10 dockerd --data-root "${DOCKERD_DIR}/data" --exec-root "${DOCKERD_DIR}/exec" \
    --pidfile "${DOCKERD_DIR}/docker.pid" -H "unix://${DOCKERD_DIR}/docker.sock" \
    --iptables=false --ip-masq=false --bridge=none "${runtime[@]}" >"${DOCKERD_DIR}/dockerd.log" 2>&1 &
  export DOCKER_HOST=unix://${DOCKERD_DIR}/docker.sock
  for _ in $(seq 60); do
    docker info >/dev/null 2>&1 && return 0
    sleep 1
  done
  die "dockerd did not answer within 60 s: see ${DOCKERD_DIR}/dockerd.log"
}

# stop_pidfile NAME FILE: stop the process whose pid FILE holds (one this project started), wait
# up to 60 s for it to exit, and remove FILE.
stop_pidfile() {
  local pid
  [[ -f $2 ]] || return 0
  pid=$(cat "$2")
  if kill -0 "${pid}" 2>/dev/null; then
    log "stopping $1 (pid ${pid})"
    kill "${pid}"
    for _ in $(seq 60); do kill -0 "${pid}" 2>/dev/null || break; sleep 1; done
  fi
  rm -f "$2"
}

# docker_down: stop the dockerd that docker_up started (by its pid file), if it runs.
docker_down() { stop_pidfile dockerd "${DOCKERD_DIR}/docker.pid"; }

# registry_up DIR ADDRESS: Debian's docker-registry (the CNCF distribution registry) serving ADDRESS
# over HTTP from DIR/data, its pid in DIR/pid (stop it with stop_pidfile) and its log in
# DIR/registry.log; returns once it answers.
registry_up() {
  local dir=$1 address=$2
  apt_install docker-registry skopeo
  mkdir -p "${dir}/data"
  printf 'version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: %s\nhttp:\n  addr: %s\n' \
    "${dir}/data" "${address}" >"${dir}/config.yml"
  docker-registry serve "${dir}/config.yml" >"${dir}/registry.log" 2>&1 &
  echo $! >"${dir}/pid"
  for _ in $(seq 30); do
    curl -fsS "http://${address}/v2/" >/dev/null 2>&1 && return 0
    kill -0 "$(cat "${dir}/pid")" 2>/dev/null || die "the registry stopped: see ${dir}/registry.log"
    sleep 1
  done
  die "the registry at ${address} did not answer within 30 s: see ${dir}/registry.log"
}
