#!/usr/bin/env bash
# Make sure a protoc is on PATH for go-to-protobuf.
#
# Upstream pins protoc 23.4 and downloads it from GitHub, which is not reachable from the machines
# this fork is built on. Debian's protobuf-compiler (libprotoc 3.21.12) is used instead: protoc only
# parses the .proto files, the Go code comes from protoc-gen-gogo built from the tree, and on an
# unmodified v1.37.1 tree this combination reproduces generated.proto and generated.pb.go byte for
# byte (checked by 'make verify', which regenerates and expects no diff).
#
#   hack/install-protoc.sh           when protoc is missing, install protobuf-compiler with apt-get;
#                                    only as root (it never runs sudo)
#   hack/install-protoc.sh --check   only check; a missing protoc is an error that says how to
#                                    install it
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

if command -v protoc >/dev/null 2>&1; then exit 0; fi
how="run 'hack/install-protoc.sh' (or 'make generated') as root, which installs Debian's protobuf-compiler with apt-get, or put a protoc on PATH"
[[ ${1:-} != --check ]] || die "protoc is not on PATH: ${how}"
[[ $(id -u) == 0 ]] || die "protoc is not on PATH, and installing it needs root: ${how}"
command -v apt-get >/dev/null 2>&1 ||
  die "protoc is not on PATH, and there is no apt-get here: install protoc (Debian's protobuf-compiler, libprotoc 3.21.12, is what 'make verify' was checked with)"
log "protoc not found: installing Debian's protobuf-compiler"
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -q protobuf-compiler >/dev/null 2>&1 ||
  { apt-get update -q >/dev/null && apt-get install -y -q protobuf-compiler >/dev/null; }
protoc --version >&2
