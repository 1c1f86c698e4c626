#!/usr/bin/env bash
# Make sure a protoc is on PATH for go-to-protobuf.
#
# Upstream pins protoc 23.4 and downloads it from GitHub, which is not reachable from the machines
# this fork is built on. Debian's protobuf-compiler (libprotoc 3.21.12) is used instead: protoc only
# parses the .proto files, the Go code comes from protoc-gen-gogo built from the tree, and on an
# unmodified v1.37.1 tree this combination reproduces generated.proto and generated.pb.go byte for
# byte (checked by 'make verify', which regenerates and expects no diff).
set -euo pipefail
if command -v protoc >/dev/null 2>&1; then exit 0; fi
echo "protoc not found: installing Debian's protobuf-compiler" >&2
SUDO=
if [[ $(id -u) != 0 ]]; then SUDO=sudo; fi
export DEBIAN_FRONTEND=noninteractive
${SUDO} apt-get install -y -q protobuf-compiler >/dev/null 2>&1 ||
  { ${SUDO} apt-get update -q >/dev/null && ${SUDO} apt-get install -y -q protobuf-compiler >/dev/null; }
protoc --version >&2
