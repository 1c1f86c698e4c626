#!/usr/bin/env bash
# Build kwok and kwokctl, at the versions pinned in this repository's go.mod, into _output/bin.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
want=$(cd "${FORK_ROOT}" && go list -m -f '{{.Version}}' sigs.k8s.io/kwok)
for tool in kwok kwokctl; do
  if [[ -x ${FORK_BIN}/${tool} ]] && "${FORK_BIN}/${tool}" --version 2>/dev/null | grep -q "${want#v}"; then
    continue
  fi
  log "building ${tool} ${want} from the module proxy"
  mkdir -p "${FORK_BIN}"
  (cd "${FORK_ROOT}" && go_quiet go build -o "${FORK_BIN}/${tool}" "sigs.k8s.io/kwok/cmd/${tool}")
done
