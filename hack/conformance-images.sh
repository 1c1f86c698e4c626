#!/usr/bin/env bash
# The container images of upstream's [Conformance] specs, built here from the tree and from Debian
# packages (no registry is reachable from machines of this kind), tagged with the names of
# test/utils/image/manifest.go, as docker-archives in _output/images/conformance (make
# test-conformance loads them into the kind nodes). Rebuilt when missing or when this script
# changed; CONFORMANCE_IMAGES=rebuild rebuilds them.
#
#   image               built from                                                   real or stand-in
#   agnhost (2.66.1,    the tree's test/images/agnhost, on Debian bookworm with the   agnhost is real; the base is
#   and 2.55)           tools the specs run in it (curl, nc -u, dig, getent, ip,       Debian instead of Alpine
#                       bash, socat), localhost.crt/key, /uploads, /agnhost-2
#   glibc-dns-testing   Debian bookworm with bind9-dnsutils, as upstream's             real (the same recipe)
#   nautilus, kitten    agnhost (above) with the tree's test/images/{nautilus,kitten}  real content, on the Debian
#                       html, CMD test-webserver                                        agnhost; kitten's
#                                                                                       os-release says it stands
#                                                                                       in for Alpine Linux (the
#                                                                                       Image Volume spec reads it)
#   busybox (1.37.0-2)  BusyBox 1.37.0 built here from its release tarball (Debian's    real busybox 1.37.0, the
#                       mirror serves it unmodified: checksum pinned), static, with     version upstream's image
#                       its default configuration, every applet in /bin: Debian's own   is built from
#                       busybox drops environment names that are not shell identifiers
#                       (its patch reverting upstream's ash), which the envFrom specs
#                       check, and has sysctl in /sbin only
#   nonewprivs          the tree's test/images/nonewprivs/nnp.go, setuid root, on      nnp is real; busybox instead
#                       busybox                                                          of Alpine
#   sample-apiserver    the tree's staging/src/k8s.io/sample-apiserver (1.37.1, not     a newer build of the same
#   (1.29.2)            1.29.2)                                                           program
# pause, nginx (hack/node-images.sh) and etcd (hack/kind-image.sh, in the node image) come from
# elsewhere.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
source "${FORK_ROOT}/hack/lib/node.sh"
source "${FORK_ROOT}/hack/lib/images.sh"

OUT=${FORK_OUTPUT}/images/conformance
IMAGES=(agnhost busybox glibc-dns-testing nautilus-kitten nonewprivs sample-apiserver)
# BusyBox's release tarball as Debian's mirror serves it (busybox_1.37.0.orig.tar.bz2).
BUSYBOX_VERSION=1.37.0
BUSYBOX_SHA256=3311dff32e746499f4df0d5df04d7eb396382d7e108bb9250e7b519b837043a4

recipe=$(sha256sum <"${BASH_SOURCE[0]}" | cut -c1-12)
built() {
  local image
  for image in "${IMAGES[@]}"; do [[ -f ${OUT}/${image}.tar ]] || return 1; done
  [[ $(cat "${OUT}/recipe" 2>/dev/null) == "${recipe}" ]]
}
if [[ ${CONFORMANCE_IMAGES:-} != rebuild ]] && built; then
  log "conformance images in ${OUT#"${FORK_ROOT}"/}: up to date"
  exit 0
fi
[[ -d ${KUBE_TREE}/.git ]] || "${FORK_ROOT}/hack/materialize.sh"
apt_install mmdebstrap jq make gcc
mkdir -p "${OUT}"
work=$(mktemp -d)
# shellcheck disable=SC2064 # expand now
trap "rm -rf '${work}'" EXIT

log "building BusyBox ${BUSYBOX_VERSION} from its release tarball (static, default configuration)"
curl -fsSL -o "${work}/busybox.tar.bz2" "http://deb.debian.org/debian/pool/main/b/busybox/busybox_${BUSYBOX_VERSION}.orig.tar.bz2"
echo "${BUSYBOX_SHA256}  ${work}/busybox.tar.bz2" | sha256sum -c --quiet
mkdir -p "${work}/busybox-src"
tar -C "${work}/busybox-src" --strip-components=1 -xjf "${work}/busybox.tar.bz2"
make -C "${work}/busybox-src" -s defconfig >/dev/null
sed -i 's/^# CONFIG_STATIC is not set/CONFIG_STATIC=y/' "${work}/busybox-src/.config"
make -C "${work}/busybox-src" -s -j"$(nproc)" busybox >"${work}/busybox-build.log" 2>&1 ||
  { tail -20 "${work}/busybox-build.log" >&2; die "BusyBox did not build"; }
BUSYBOX=${work}/busybox-src/busybox
base_rootfs "${work}/busybox"
# Docker's busybox image, which upstream's is built on, has every applet in /bin too (the Sysctls
# spec runs /bin/sysctl).
for applet in $("${BUSYBOX}" --list); do
  [[ -e ${work}/busybox/bin/${applet} ]] || ln -s busybox "${work}/busybox/bin/${applet}"
done
write_image "${work}/busybox" "${OUT}/busybox.tar" '"Cmd":["sh"]' "$(image_ref BusyBox)"

log "building agnhost, nnp and sample-apiserver from the tree"
(cd "${KUBE_TREE}" && CGO_ENABLED=0 go build -o "${work}/bin/agnhost" ./test/images/agnhost &&
  CGO_ENABLED=0 go build -o "${work}/bin/nnp" ./test/images/nonewprivs &&
  CGO_ENABLED=0 go build -o "${work}/bin/sample-apiserver" k8s.io/sample-apiserver)

log "Debian bookworm with the specs' network and DNS tools (mmdebstrap)"
mmdebstrap --quiet --variant=minbase \
  --include=curl,netcat-openbsd,bind9-dnsutils,iproute2,bash,socat,ca-certificates,procps \
  bookworm "${work}/debian.tar"
mkdir -p "${work}/debian"
tar -C "${work}/debian" -xf "${work}/debian.tar"
rm -f "${work}/debian.tar"
# What the specs never read: package lists and caches, documentation, locales.
rm -rf "${work}"/debian/var/lib/apt/lists/* "${work}"/debian/var/cache/apt/* "${work}"/debian/usr/share/{doc,man,info,locale}/*
write_image "${work}/debian" "${OUT}/glibc-dns-testing.tar" '"Cmd":["sh"]' "$(image_ref GlibcDnsTesting)"

cp -a "${work}/debian" "${work}/agnhost-root"
cp "${work}/bin/agnhost" "${work}/agnhost-root/agnhost"
ln -s agnhost "${work}/agnhost-root/agnhost-2"
cp "${KUBE_TREE}"/test/images/agnhost/porter/localhost.{crt,key} "${work}/agnhost-root/"
mkdir -p "${work}/agnhost-root/uploads"
write_image "${work}/agnhost-root" "${OUT}/agnhost.tar" '"Entrypoint":["/agnhost"],"Cmd":["pause"]' \
  "$(image_ref Agnhost)" "$(image_ref AgnhostPrev)"

for image in nautilus kitten; do
  cp -a "${work}/agnhost-root" "${work}/${image}"
  cp "${KUBE_TREE}/test/images/${image}/html/"* "${work}/${image}/"
  if [[ ${image} == kitten ]]; then
    # Upstream's kitten is built on Alpine, and the Image Volume spec checks that the volume
    # holds the image's /etc/os-release by reading "Alpine Linux" in it: say what this one is.
    printf '# A stand-in for registry.k8s.io/e2e-test-images/kitten, whose base is Alpine Linux,\n# built on Debian by hack/conformance-images.sh.\n' |
      cat - "${work}/${image}/usr/lib/os-release" >"${work}/${image}/os-release.new"
    rm -f "${work}/${image}/etc/os-release"
    mv "${work}/${image}/os-release.new" "${work}/${image}/etc/os-release"
  fi
  write_image "${work}/${image}" "${work}/${image}.tar" '"Entrypoint":["/agnhost"],"Cmd":["test-webserver"]' \
    "$(image_ref "${image^}")"
done
merge_archives "${OUT}/nautilus-kitten.tar" "${work}/nautilus.tar" "${work}/kitten.tar"

base_rootfs "${work}/nonewprivs"
mkdir -p "${work}/nonewprivs/usr/local/bin"
install -m 4755 "${work}/bin/nnp" "${work}/nonewprivs/usr/local/bin/nnp"
write_image "${work}/nonewprivs" "${OUT}/nonewprivs.tar" '"Cmd":["nnp"]' "$(image_ref Nonewprivs)"

base_rootfs "${work}/sample-apiserver"
cp "${work}/bin/sample-apiserver" "${work}/sample-apiserver/sample-apiserver"
write_image "${work}/sample-apiserver" "${OUT}/sample-apiserver.tar" '"Entrypoint":["/sample-apiserver"]' \
  "registry.k8s.io/e2e-test-images/sample-apiserver:$(sed -n 's/.*configs\[APIServer\] = Config{list.PromoterE2eRegistry, "sample-apiserver", "\(.*\)"}/\1/p' "${KUBE_TREE}/test/utils/image/manifest.go")"
echo "${recipe}" >"${OUT}/recipe"
log "conformance images in ${OUT#"${FORK_ROOT}"/}: $(cd "${OUT}" && echo ./*.tar)"
