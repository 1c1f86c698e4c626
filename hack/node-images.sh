#!/usr/bin/env bash
# The container images of the real node (make up NODES=real), built from local sources: no
# registry is reachable from machines of this kind, so nothing is pulled.
#
#   hack/node-images.sh                    build the image archives into _output/images
#   hack/node-images.sh build-if-missing   the same, unless they are there
#   hack/node-images.sh import             import them into the node's containerd (CONTAINERD_ADDRESS)
#
# Each image is a docker-archive tarball of one layer, tagged with the names that upstream's e2e
# framework (test/utils/image/manifest.go) and the kubelet use, so pods find them already present
# (pull policy IfNotPresent) and nothing tries a registry:
#   agnhost      agnhost built from the tree's test/images/agnhost, with the libraries it links and
#                porter's localhost.crt/key as in its Dockerfile; also tagged as the previous
#                agnhost (AgnhostPrev)
#   pause        the same agnhost binary running "agnhost pause" (the sandbox image)
#   busybox      Debian's static busybox with its applets
#   nginx, nginx-new, nautilus, kitten
#                stand-ins: busybox's httpd serving an index.html on port 80 from
#                /usr/share/nginx/html, which is what the tests use these images for
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
source "${FORK_ROOT}/hack/lib/node.sh"
source "${FORK_ROOT}/hack/lib/images.sh"

IMAGES=${FORK_OUTPUT}/images
BUSYBOX=${BUSYBOX:-/bin/busybox}
# STAMP records that the images were built from a static busybox: images of a dynamically linked
# one (Debian's busybox package) cannot run a command without the libc they lack.
STAMP=${IMAGES}/.static-busybox

# usable_busybox: BUSYBOX is statically linked and has httpd.
usable_busybox() {
  [[ -x ${BUSYBOX} ]] && ! LC_ALL=C ldd "${BUSYBOX}" >/dev/null 2>&1 && "${BUSYBOX}" --list | grep -qx httpd
}

# ensure_busybox installs Debian's busybox-static when BUSYBOX is missing or dynamically linked,
# as root on Debian; otherwise it stops with what to install.
ensure_busybox() {
  usable_busybox && return
  if [[ ${BUSYBOX} == /bin/busybox && ${EUID} -eq 0 ]] && command -v apt-get >/dev/null; then
    log "installing Debian's busybox-static: ${BUSYBOX} is missing or dynamically linked"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q busybox-static >/dev/null
  fi
  usable_busybox || die "no static busybox with httpd at ${BUSYBOX}: install Debian's busybox-static (the busybox package is dynamically linked and cannot run in an image)"
}

build() {
  ensure_busybox
  rm -f "${STAMP}"
  mkdir -p "${IMAGES}"
  local work
  work=$(mktemp -d)
  # shellcheck disable=SC2064 # expand now
  trap "rm -rf '${work}'" RETURN

  log "building agnhost from the tree (test/images/agnhost)"
  # Built as the tests build (cgo as the toolchain defaults it), so that it shares their build
  # cache: a static build (CGO_ENABLED=0) compiles every package again, about five minutes of a
  # cold 'make test' on two cores. The image carries the libraries it links.
  (cd "${KUBE_TREE}" && go build -o "${IMAGES}/agnhost" ./test/images/agnhost)

  base_rootfs "${work}/busybox"
  write_image "${work}/busybox" "${IMAGES}/busybox.tar" '"Cmd":["sh"]' "$(image_ref BusyBox)"

  cp -a "${work}/busybox" "${work}/agnhost"
  cp "${IMAGES}/agnhost" "${work}/agnhost/agnhost"
  shared_libs "${work}/agnhost" "${IMAGES}/agnhost"
  ln -s agnhost "${work}/agnhost/agnhost-2"
  cp "${KUBE_TREE}"/test/images/agnhost/porter/localhost.{crt,key} "${work}/agnhost/"
  mkdir -p "${work}/agnhost/uploads"
  write_image "${work}/agnhost" "${IMAGES}/agnhost.tar" '"Entrypoint":["/agnhost"],"Cmd":["pause"]' \
    "$(image_ref Agnhost)" "$(image_ref AgnhostPrev)"
  write_image "${work}/agnhost" "${IMAGES}/pause.tar" '"Entrypoint":["/agnhost","pause"]' "$(image_ref pause)"

  cp -a "${work}/busybox" "${work}/web"
  mkdir -p "${work}/web/usr/share/nginx/html"
  echo '<html><body>It works.</body></html>' >"${work}/web/usr/share/nginx/html/index.html"
  write_image "${work}/web" "${IMAGES}/web.tar" '"Entrypoint":["httpd","-f","-p","80","-h","/usr/share/nginx/html"],"ExposedPorts":{"80/tcp":{}}' \
    "$(image_ref Nginx)" "$(image_ref NginxNew)" "$(image_ref Nautilus)" "$(image_ref Kitten)"
  touch "${STAMP}"
  log "images in ${IMAGES#"${FORK_ROOT}"/}: $(cd "${IMAGES}" && echo ./*.tar)"
}

import() {
  local address=${CONTAINERD_ADDRESS:?} image
  for image in busybox agnhost pause web; do
    ctr --address "${address}" --namespace k8s.io images import --platform "linux/${ARCH}" "${IMAGES}/${image}.tar" >/dev/null
  done
  ctr --address "${address}" --namespace k8s.io images ls -q | grep -v '^sha256:' >&2
}

case ${1:-build} in
  build) build ;;
  build-if-missing) [[ -f ${IMAGES}/web.tar && -f ${IMAGES}/pause.tar && -f ${STAMP} ]] || build ;;
  import) import ;;
  *) die "usage: $0 [build|build-if-missing|import]" ;;
esac
