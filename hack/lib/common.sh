# Shared settings for the fork's scripts. Source it; do not run it.
# shellcheck shell=bash

FORK_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# The upstream release the series applies to. Staging modules are published as v0.<minor>.<patch>.
KUBE_VERSION=${KUBE_VERSION:-v1.37.1}
STAGING_VERSION=${STAGING_VERSION:-v0.${KUBE_VERSION#v1.}}
# The sample modules (k8s.io/sample-*) are taken at this version when the proxy does not serve
# them at STAGING_VERSION (hack/materialize.sh): nothing the release builds imports them.
SAMPLES_FALLBACK_VERSION=${SAMPLES_FALLBACK_VERSION:-v0.37.1}
FORK_OUTPUT=${FORK_ROOT}/_output
KUBE_TREE=${KUBE_TREE:-${FORK_OUTPUT}/kubernetes}
FORK_BIN=${FORK_OUTPUT}/bin
PATCHES_DIR=${FORK_ROOT}/patches
# The base commit of the materialized tree is tagged so every script can find it.
BASE_TAG=upstream/${KUBE_VERSION}
# The local cluster of 'make up': kwokctl keeps its state in LOCAL_DIR/kwok (KWOK_WORKDIR).
LOCAL_DIR=${FORK_OUTPUT}/local
LOCAL_CLUSTER=${CLUSTER:-configsnapshot}
# shellcheck disable=SC2034 # for the scripts that source this file
LOCAL_KUBECONFIG=${LOCAL_DIR}/kubeconfig

export GOFLAGS=${GOFLAGS:--buildvcs=false}
export GOTOOLCHAIN=${GOTOOLCHAIN:-local}

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }
# go_quiet runs a go command without its "go: downloading" lines (the first build downloads
# hundreds of modules); they go to _output/go-downloads.log, errors still reach stderr.
go_quiet() {
  mkdir -p "${FORK_OUTPUT}"
  "$@" 2> >(tee -a "${FORK_OUTPUT}/go-downloads.log" | grep -v '^go: downloading ' >&2)
}

# duration SECONDS: "12m5s".
duration() { echo "$(($1 / 60))m$(($1 % 60))s"; }

# at_tree_path DIR COMMAND...: runs COMMAND in DIR, a worktree of the tree's repository (the stock
# worktree of hack/build-stock-kubectl.sh), mounted at the tree's own path where a bind mount in
# a mount namespace of its own can be made (root; tried first); elsewhere in DIR. Go keys its
# build cache by a package's directory as well as its content, so only at the tree's path do the
# packages that DIR shares with the tree come from the tree's builds: all but 7 of
# kube-controller-manager's 2,216 for the previous release, half of them for stock v1.37.1. The
# mount is in a namespace of COMMAND's own, which no other process sees and which goes with it;
# binaries built there name the tree's path in their stack traces.
at_tree_path() {
  local dir=$1
  shift
  if unshare --mount --propagation private mount --bind "${dir}" "${KUBE_TREE}" 2>/dev/null; then
    # shellcheck disable=SC2016 # expanded by the inner shell
    unshare --mount --propagation private bash -c 'mount --bind "$1" "$2" && cd "$2" && shift 2 && exec "$@"' \
      _ "${dir}" "${KUBE_TREE}" "$@"
  else
    (cd "${dir}" && "$@")
  fi
}

# apt_install installs, with apt-get as root, the Debian packages named after the commands given
# that are not on PATH (each package has its command's name); without root or apt-get it fails
# and says what to install.
apt_install() {
  local missing=() p
  for p in "$@"; do command -v "${p}" >/dev/null || missing+=("${p}"); done
  ((${#missing[@]} > 0)) || return 0
  if [[ ${EUID} -ne 0 ]] || ! command -v apt-get >/dev/null; then
    printf 'error: %s not on PATH: install Debian'"'"'s %s as root (apt-get install -y %s)\n' "${missing[*]}" "${missing[*]}" "${missing[*]}" >&2
    return 1
  fi
  log "installing Debian's ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null 2>&1 ||
    { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null; }
}

# Deterministic identity and dates for commits the scripts make, so the base commit
# (and therefore the exported series) does not depend on who materialized the tree.
fork_git() {
  GIT_AUTHOR_NAME="Kubernetes Release" GIT_AUTHOR_EMAIL="release@kubernetes.io" \
  GIT_COMMITTER_NAME="Kubernetes Release" GIT_COMMITTER_EMAIL="release@kubernetes.io" \
  GIT_AUTHOR_DATE="2000-01-01T00:00:00Z" GIT_COMMITTER_DATE="2000-01-01T00:00:00Z" \
    git -C "${KUBE_TREE}" "$@"
}

# format-patch flags chosen so the exported series does not change with the git version or
# the size of the repository: no signature (git version), full blob ids (no abbreviation that
# grows with the repo), zeroed "From <sha>" lines (commit ids change on every git am).
FORMAT_PATCH_FLAGS=(--zero-commit --no-signature --full-index --binary --no-renames
  --stat=100 --stat-graph-width=20 --diff-algorithm=myers --no-numbered)

# export_series DIR: write the commits on top of the base as patch files into DIR.
export_series() {
  local out=$1
  git -C "${KUBE_TREE}" -c core.quotepath=off format-patch "${FORMAT_PATCH_FLAGS[@]}" \
    -o "${out}" "${BASE_TAG}..HEAD" >/dev/null
}

# same_series DIR: 0 when DIR holds exactly the patches of PATCHES_DIR, whose subdirectories
# hold the series of other trees (patches/argo-rollouts/: hack/argo-rollouts.sh) and do not count.
same_series() {
  diff -r -q -x argo-rollouts "$1" "${PATCHES_DIR}"
}

# staging_modules: the staging module names listed in the upstream go.work.
staging_modules() {
  sed -n 's#^[[:space:]]*\./staging/src/k8s.io/\([^[:space:]]*\)$#\1#p' "$1"
}

# module_dir MODULE@VERSION: download a module with the Go module proxy and print its directory.
module_dir() {
  (cd /tmp && go mod download -json "$1" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
}

# fork_version: the version stamped into the patched binaries. A development build is
# v1.37.1+configsnapshot.<tree id>: the tree id is git's hash of the patched source, so the same
# series gives the same version whoever builds it. make release sets FORK_VERSION to the release's
# version, v1.37.1+configsnapshot.N (release_version). SemVer build metadata (+...) keeps the
# release ordering of v1.37.1, and kubeadm tags images with it ('+' becomes '_').
fork_version() {
  echo "${FORK_VERSION:-${KUBE_VERSION}+configsnapshot.$(git -C "${KUBE_TREE}" rev-parse --short=12 'HEAD^{tree}')}"
}

# release_version: v1.37.1+configsnapshot.N, N from hack/RELEASE (see docs/operations.md, "What the release holds").
release_version() {
  echo "${KUBE_VERSION}+configsnapshot.$(tr -d '[:space:]' <"${FORK_ROOT}/hack/RELEASE")"
}

# version_ldflags VERSION [NAME=VALUE...]: the -ldflags that stamp VERSION (and its major and minor
# from KUBE_VERSION) into component-base and client-go, as a release build does, with each NAME
# (gitCommit, gitTreeState, buildDate) set to VALUE in both.
version_ldflags() {
  local version=$1 major=${KUBE_VERSION#v} minor=${KUBE_VERSION#v*.} pkg kv flags=()
  shift
  major=${major%%.*} minor=${minor%%.*}
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    flags+=("-X '${pkg}.gitVersion=${version}'" "-X '${pkg}.gitMajor=${major}'" "-X '${pkg}.gitMinor=${minor}'")
    for kv in "$@"; do flags+=("-X '${pkg}.${kv}'"); done
  done
  echo "${flags[*]}"
}

# committer_ident TREE: git am records a committer; on a machine without a git identity, name the
# tree's own (the patches keep their authors; the committer is not exported).
committer_ident() {
  if ! git -C "$1" var GIT_COMMITTER_IDENT >/dev/null 2>&1; then
    export GIT_COMMITTER_NAME="Kubernetes Fork" GIT_COMMITTER_EMAIL="fork@localhost"
  fi
}

# tree_operation: "am" while a git am is in progress in the tree, "rebase" while a git rebase is,
# nothing otherwise.
tree_operation() {
  local git_dir=${KUBE_TREE}/.git
  if [[ -e ${git_dir}/rebase-apply/applying ]]; then
    echo am
  elif [[ -d ${git_dir}/rebase-apply || -d ${git_dir}/rebase-merge ]]; then
    echo rebase
  fi
}

# am_stopped_at: the patch at which the git am in progress in the tree stopped: its file in
# patches/ when it is one of them (git am keeps a byte copy of every patch it was given), and its
# place in the git am.
am_stopped_at() {
  local dir=${KUBE_TREE}/.git/rebase-apply next last mail p
  next=$(cat "${dir}/next" 2>/dev/null || echo '?')
  last=$(cat "${dir}/last" 2>/dev/null || echo '?')
  mail=${dir}/$(printf '%04d' "${next}" 2>/dev/null || true)
  for p in "${PATCHES_DIR}"/*.patch; do
    if [[ -f ${mail} && -f ${p} ]] && cmp -s "${mail}" "${p}"; then
      echo "patches/${p##*/} (patch ${next} of ${last})"
      return
    fi
  done
  echo "patch ${next} of ${last} ($(head -n 1 "${dir}/final-commit" 2>/dev/null || echo 'no subject'))"
}

# am_help: what to do about a git am in progress in the tree.
am_help() {
  local tree=${KUBE_TREE#"${FORK_ROOT}"/}
  cat <<HELP
To finish it:
  cd ${tree}
  git am --show-current-patch=diff   # what does not apply
  # resolve: edit the files and 'git add' them (or retry with 'git am --3way'), then
  git am --continue                  # commits it and applies the remaining patches
  cd - && make patches               # export the result to patches/
To drop it: 'git -C ${tree} am --abort' returns the tree to where the git am started
(for 'make tree', the pristine base); then 'make tree FORCE=1' starts over.
HELP
}

# die_if_tree_busy: stop, saying what to do, while a git am or git rebase is in progress in the tree.
die_if_tree_busy() {
  local tree=${KUBE_TREE#"${FORK_ROOT}"/}
  case $(tree_operation) in
    am) die "a git am is in progress in ${tree}; it stopped at $(am_stopped_at).
$(am_help)" ;;
    rebase) die "a git rebase is in progress in ${tree}: finish it (git rebase --continue) or abort it (git rebase --abort) first" ;;
  esac
}

# stage_chaos: copy the chaos program (hack/chaos/*.go, its tests included) into the tree's
# test/e2e_fork/chaos, which git ignores there.
stage_chaos() {
  mkdir -p "${KUBE_TREE}/test/e2e_fork/chaos"
  cp "${FORK_ROOT}"/hack/chaos/*.go "${KUBE_TREE}/test/e2e_fork/chaos/"
  grep -qx '/test/e2e_fork/' "${KUBE_TREE}/.git/info/exclude" 2>/dev/null || echo '/test/e2e_fork/' >>"${KUBE_TREE}/.git/info/exclude"
}

# build_chaos: build the chaos program (hack/chaos/*.go: make chaos, make storm, make upgrade) in
# the tree, where it uses the tree's client-go and snapshot names, into _output/bin/chaos.
build_chaos() {
  stage_chaos
  log "building the chaos program"
  (cd "${KUBE_TREE}" && go build -o "${FORK_BIN}/chaos" ./test/e2e_fork/chaos)
}

# build_p4 TREE SHIM OUT: build make bench's P4 into the test binary OUT: the tree's
# pkg/controller/deployment with hack/bench/sync_bench_test.go and the tree's shim
# (hack/bench/sync_bench_shim_{stock,patched}.go.txt), which the tree does not keep afterwards.
# make test builds the patched one, so that a hook whose signature the shim no longer follows
# fails there, not at the bench.
build_p4() {
  local tree=$1 shim=$2 out=$3 dir=${1}/pkg/controller/deployment rc=0
  cp "${FORK_ROOT}/hack/bench/sync_bench_test.go" "${dir}/zz_fork_sync_bench_test.go"
  cp "${FORK_ROOT}/hack/bench/sync_bench_shim_${shim}.go.txt" "${dir}/zz_fork_sync_bench_shim_test.go"
  (cd "${tree}" && go test -c -o "${out}" ./pkg/controller/deployment) >&2 || rc=$?
  rm -f "${dir}/zz_fork_sync_bench_test.go" "${dir}/zz_fork_sync_bench_shim_test.go"
  return "${rc}"
}

# kcm_metric_endpoint: "HOST CERT KEY" of the local cluster's kube-controller-manager /metrics,
# from the cluster's kwok.yaml (kwokctl starts it with /metrics open to every client and records
# the endpoint with the cluster's client certificate).
kcm_metric_endpoint() {
  local config=${LOCAL_DIR}/kwok/clusters/${LOCAL_CLUSTER}/kwok.yaml
  [[ -f ${config} ]] || die "no local cluster: run 'make up' first"
  awk '
    /^- args:/ { component = "" }
    /^  name: / { component = $2 }
    /^  metric:/ { in_metric = 1; next }
    in_metric && /^    host:/ { host = $2 }
    in_metric && /^    certPath:/ { cert = $2 }
    in_metric && /^    keyPath:/ { key = $2 }
    in_metric && !/^    / { in_metric = 0 }
    component == "kube-controller-manager" && host != "" { print host, cert, key; exit }
    /^  name: / && component != "kube-controller-manager" { host = ""; cert = ""; key = "" }
  ' "${config}"
}

