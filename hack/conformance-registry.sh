#!/usr/bin/env bash
# A registry that serves the conformance images under upstream's names, for the specs that pull
# with imagePullPolicy: Always (Image Volume with kitten, PodCertificate mTLS with agnhost): with
# no registry reachable such a pull fails, even with the image on the node.
#
# Debian's docker-registry (the CNCF distribution registry) runs on this host, at the kind
# network's gateway, holding every image of _output/images (skopeo copies them from the
# archives); each node's containerd resolves registry.k8s.io through it (kind/conformance.yaml
# sets containerd's config_path; this writes certs.d/registry.k8s.io/hosts.toml in the nodes).
# Nothing else changes for the nodes: images that are present are used as before.
#
#   hack/conformance-registry.sh up     start it (stopped first if it runs), push, point the nodes at it
#   hack/conformance-registry.sh down   stop the registry this script started (by its pid file)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
source "${FORK_ROOT}/hack/lib/kind.sh"

dir=${KIND_WORK}/registry
port=${CONFORMANCE_REGISTRY_PORT:-5000}

down() { stop_pidfile "the conformance registry" "${dir}/pid"; }

# refs ARCHIVE: the registry.k8s.io names a docker-archive holds.
refs() {
  tar -xOf "$1" manifest.json | python3 -c '
import json, sys
for image in json.load(sys.stdin):
    for tag in image.get("RepoTags") or []:
        if tag.startswith("registry.k8s.io/"):
            print(tag)'
}

up() {
  down
  docker_up
  local gateway address archive ref node pushed=()
  gateway=$(docker network inspect kind -f '{{range .IPAM.Config}}{{.Gateway}} {{end}}' | tr ' ' '\n' | grep -m1 '\.') ||
    die "no IPv4 gateway on the kind network: is the cluster up?"
  address=${gateway}:${port}
  log "conformance registry at ${address} (${dir#"${FORK_ROOT}"/})"
  registry_up "${dir}" "${address}"

  # The conformance archives first: where both hold a name (busybox, agnhost), theirs is the one
  # loaded into the nodes.
  for archive in "${FORK_OUTPUT}"/images/conformance/*.tar "${FORK_OUTPUT}"/images/*.tar; do
    while read -r ref; do
      [[ " ${pushed[*]} " != *" ${ref#registry.k8s.io/} "* ]] || continue
      skopeo copy --quiet --dest-tls-verify=false "docker-archive:${archive}:${ref}" \
        "docker://${address}/${ref#registry.k8s.io/}" >/dev/null
      pushed+=("${ref#registry.k8s.io/}")
    done < <(refs "${archive}")
  done
  log "pushed ${#pushed[@]} images: ${pushed[*]}"

  for node in $("${FORK_BIN}/kind" get nodes --name "${KIND_CLUSTER}"); do
    docker exec -i "${node}" sh -c 'mkdir -p /etc/containerd/certs.d/registry.k8s.io &&
      cat >/etc/containerd/certs.d/registry.k8s.io/hosts.toml' <<EOF
server = "https://registry.k8s.io"

[host."http://${address}"]
  capabilities = ["pull", "resolve"]
EOF
  done
}

case ${1:-} in
up) up ;;
down) down ;;
*) die "usage: $0 up|down" ;;
esac
