#!/usr/bin/env bash
# Container images without a registry or a Docker build: docker-archive tarballs written from a
# root file system, which `ctr images import`, `docker load` and kind's node-image builder take.
# Shared by hack/node-images.sh (the real node's images) and hack/kind-image.sh (the kind image).

ARCH=$(go env GOARCH)
PATH_ENV="PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

# write_image ROOTFS OUT CONFIG TAG...: a docker-archive of one layer holding ROOTFS. CONFIG is
# the JSON members of the image's runtime config besides Env (Entrypoint, Cmd, ...). The layer
# is reproducible (sorted, no owners, no times), so images built from the same rootfs share it.
# The archive lists its tags in `repositories` too, first: kind reads that file to know which
# images an archive brings (and pulls the others).
write_image() {
  local rootfs=$1 out=$2 config=$3 work layer config_id tags
  shift 3
  work=$(mktemp -d)
  tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "${rootfs}" -cf "${work}/layer.tar" .
  layer=$(sha256sum "${work}/layer.tar" | cut -d' ' -f1)
  mv "${work}/layer.tar" "${work}/${layer}.tar"
  printf '{"architecture":"%s","os":"linux","config":{"Env":["%s"],%s},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
    "${ARCH}" "${PATH_ENV}" "${config}" "${layer}" >"${work}/config.json"
  config_id=$(sha256sum "${work}/config.json" | cut -d' ' -f1)
  mv "${work}/config.json" "${work}/${config_id}.json"
  tags=$(printf '"%s",' "$@")
  printf '[{"Config":"%s.json","RepoTags":[%s],"Layers":["%s.tar"]}]' "${config_id}" "${tags%,}" "${layer}" >"${work}/manifest.json"
  repositories "${work}/manifest.json" >"${work}/repositories"
  tar -C "${work}" -cf "${out}.tmp" repositories manifest.json "${config_id}.json" "${layer}.tar"
  mv "${out}.tmp" "${out}"
  rm -rf "${work}"
}

# repositories MANIFEST: the legacy `repositories` file ({"repo":{"tag":"id"}}) of a docker-archive
# manifest.json, with the names fully qualified as containerd stores them.
repositories() {
  jq -c 'map(.Config | sub("\\.json$"; "")) as $ids | [to_entries[] | .key as $i | .value.RepoTags[]
      | (if test("^[^/]+\\.[^/]+/") or test("^localhost[:/]") then . elif test("/") then "docker.io/" + . else "docker.io/library/" + . end)
      | capture("^(?<repo>.+):(?<tag>[^:/]+)$") | {repo, tag, id: $ids[$i]}]
    | reduce .[] as $e ({}; .[$e.repo][$e.tag] = $e.id)' "$1"
}

# merge_archives OUT IN...: one docker-archive holding every image of the archives IN.
merge_archives() {
  local out=$1 work in
  shift
  work=$(mktemp -d)
  echo '[]' >"${work}/manifest.json"
  for in in "$@"; do
    mkdir "${work}/in"
    tar -C "${work}/in" -xf "${in}"
    jq -s '.[0] + .[1]' "${work}/manifest.json" "${work}/in/manifest.json" >"${work}/merged.json"
    mv "${work}/merged.json" "${work}/manifest.json"
    rm -f "${work}/in/manifest.json" "${work}/in/repositories"
    mv -f "${work}"/in/* "${work}/"
    rmdir "${work}/in"
  done
  repositories "${work}/manifest.json" >"${work}/repositories"
  local layers=() f
  for f in "${work}"/*; do
    case ${f##*/} in repositories | manifest.json) ;; *) layers+=("${f##*/}") ;; esac
  done
  (cd "${work}" && tar -cf "${out}.tmp" repositories manifest.json "${layers[@]}")
  mv "${out}.tmp" "${out}"
  rm -rf "${work}"
}

# base_rootfs DIR: busybox and its applets, users and groups as upstream's images have them.
base_rootfs() {
  local dir=$1 applet
  mkdir -p "${dir}"/{bin,sbin,usr/bin,usr/sbin,etc,root,proc,sys,dev,var/tmp}
  install -d -m 1777 "${dir}/tmp"
  cp "${BUSYBOX}" "${dir}/bin/busybox"
  for applet in $("${BUSYBOX}" --list-full); do
    [[ -e ${dir}/${applet} ]] || ln -s /bin/busybox "${dir}/${applet}"
  done
  printf '%s\n' 'root:x:0:0:root:/root:/bin/sh' 'nobody:x:65534:65534:nobody:/nonexistent:/bin/false' \
    'user-defined-in-image:x:1000:1000::/home/user-defined-in-image:/bin/sh' >"${dir}/etc/passwd"
  printf '%s\n' 'root:x:0:' 'nogroup:x:65534:' 'user-defined-in-image:x:1000:' \
    'group-defined-in-image:x:50000:user-defined-in-image' >"${dir}/etc/group"
}

# binary_rootfs DIR BINARY...: the binaries in DIR/usr/local/bin with the shared libraries they
# link (ldd), for images of binaries built with cgo.
binary_rootfs() {
  local dir=$1 bin
  shift
  mkdir -p "${dir}/usr/local/bin" "${dir}/etc" "${dir}/tmp"
  chmod 1777 "${dir}/tmp"
  printf '%s\n' 'root:x:0:0:root:/root:/sbin/nologin' 'nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin' >"${dir}/etc/passwd"
  printf '%s\n' 'root:x:0:' 'nogroup:x:65534:' >"${dir}/etc/group"
  for bin in "$@"; do
    cp "${bin}" "${dir}/usr/local/bin/"
    shared_libs "${dir}" "${bin}"
  done
}

# shared_libs DIR BINARY: the shared libraries that BINARY links (ldd), at their paths under DIR;
# nothing for a static binary.
shared_libs() {
  local dir=$1 lib
  for lib in $(ldd "$2" 2>/dev/null | grep -o '/[^ ]*' || true); do
    mkdir -p "${dir}$(dirname "${lib}")"
    cp -L "${lib}" "${dir}${lib}"
  done
}

# kubeadm_const NAME: a version constant of the tree's kubeadm (DefaultEtcdVersion,
# CoreDNSVersion, PauseVersion).
kubeadm_const() { sed -n "s/^\s*$1 = \"\(.*\)\"/\1/p" "${KUBE_TREE}/cmd/kubeadm/app/constants/constants.go"; }

# component_image BINARY OUT REF...: the image of a control-plane component as the release ships
# it: the binary with the libraries it links; kube-proxy's also holds a minimal Debian bookworm
# with iptables, nftables, conntrack, ipset and kmod, as upstream's distroless-iptables does.
component_image() {
  local bin=$1 out=$2 name work
  shift 2
  name=$(basename "${bin}")
  work=$(mktemp -d)
  if [[ ${name} == kube-proxy ]]; then
    apt_install mmdebstrap
    mmdebstrap --quiet --variant=minbase --include=iptables,nftables,conntrack,ipset,kmod bookworm "${work}/rootfs.tar"
    mkdir -p "${work}/rootfs"
    tar -C "${work}/rootfs" -xf "${work}/rootfs.tar"
    rm "${work}/rootfs.tar"
    cp "${bin}" "${work}/rootfs/usr/local/bin/"
  else
    binary_rootfs "${work}/rootfs" "${bin}"
  fi
  write_image "${work}/rootfs" "${out}" "\"Entrypoint\":[\"/usr/local/bin/${name}\"]" "$@"
  rm -rf "${work}"
}

# etcd_image OUT REF, coredns_image OUT REF, pause_image OUT REF: the images kubeadm runs besides
# the control plane, built here: etcd (go.mod's, make etcd), CoreDNS (REF's version, built once
# from the Go module proxy) and pause (upstream's build/pause/linux/pause.c, built static once:
# kubeadm's upgrade health check runs it with -v and waits for it to exit).
etcd_image() {
  local work
  work=$(mktemp -d)
  binary_rootfs "${work}" "${FORK_BIN}/etcd"
  write_image "${work}" "$1" '"Entrypoint":["/usr/local/bin/etcd"]' "$2"
  rm -rf "${work}"
}
coredns_image() {
  local version=${2##*:} work bin
  bin=${FORK_OUTPUT}/tools/coredns-${version}
  if [[ ! -x ${bin} ]]; then
    log "building coredns ${version} (Go module proxy)"
    work=$(mktemp -d)
    (cd "${work}" && go mod download -json "github.com/coredns/coredns@${version}" >/dev/null)
    rm -rf "${work}"
    mkdir -p "$(dirname "${bin}")"
    (cd "$(go env GOMODCACHE)/github.com/coredns/coredns@${version}" && CGO_ENABLED=0 go build -o "${bin}" .)
  fi
  work=$(mktemp -d)
  binary_rootfs "${work}" "${bin}"
  mv "${work}/usr/local/bin/coredns-${version}" "${work}/coredns"
  write_image "${work}" "$1" '"Entrypoint":["/coredns"]' "$2"
  rm -rf "${work}"
}
pause_image() {
  local version=${2##*:} work bin
  bin=${FORK_OUTPUT}/tools/pause-${version}
  if [[ ! -x ${bin} ]]; then
    apt_install gcc
    mkdir -p "$(dirname "${bin}")"
    gcc -Os -Wall -Werror -static "-DVERSION=v${version}" -o "${bin}" "${KUBE_TREE}/build/pause/linux/pause.c" ||
      die "could not build pause (gcc with a static libc: Debian's gcc and libc6-dev)"
  fi
  work=$(mktemp -d)
  cp "${bin}" "${work}/pause"
  write_image "${work}" "$1" '"Entrypoint":["/pause"]' "$2"
  rm -rf "${work}"
}
