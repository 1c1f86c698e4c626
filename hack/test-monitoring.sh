#!/usr/bin/env bash
# make test-monitoring (and the monitoring suite of make test): the alert rules and the dashboard
# of monitoring/, checked against the metrics of the series and with promtool.
#
#   1. hack/tools/monitoring: every metric and label that monitoring/alerts.yaml and
#      monitoring/dashboard.json name is defined in the tree's
#      staging/src/k8s.io/config-snapshot/metrics/metrics.go; the dashboard's queries are written out
#      as recording rules;
#   2. promtool check rules: the alert rules and the dashboard's queries parse;
#   3. promtool test rules monitoring/alerts_test.yaml: each alert fires when, and only when, it
#      should;
#   4. promtool check config --syntax-only monitoring/scrape/prometheus.yml: the scrape job for
#      kubeadm control planes parses (Debian's promtool has no Kubernetes service discovery, and
#      the token file exists only in a pod).
#
# promtool is Debian's (package prometheus): the one on PATH, or else the package is downloaded
# with apt-get download and only its promtool unpacked into _output/tools (no server installed
# or started).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

# promtool_path prints the path of a promtool, fetching Debian's when there is none.
promtool_path() {
  if command -v promtool >/dev/null; then
    command -v promtool
    return
  fi
  local dir=${FORK_OUTPUT}/tools/prometheus
  if [[ ! -x ${dir}/usr/bin/promtool ]]; then
    command -v apt-get >/dev/null || die "promtool not on PATH and no apt-get: install Prometheus' promtool"
    local tmp
    tmp=$(mktemp -d)
    (cd "${tmp}" && apt-get download -q prometheus >/dev/null 2>&1) ||
      { apt-get update -q >/dev/null 2>&1 && (cd "${tmp}" && apt-get download -q prometheus >/dev/null 2>&1); } ||
      die "cannot download Debian's prometheus package (for promtool)"
    mkdir -p "${dir}"
    dpkg-deb -x "${tmp}"/prometheus_*.deb "${dir}"
    rm -rf "${tmp}"
  fi
  echo "${dir}/usr/bin/promtool"
}

main() {
  local promtool metrics=${KUBE_TREE}/staging/src/k8s.io/config-snapshot/metrics/metrics.go
  [[ -f ${metrics} ]] || die "${metrics#"${FORK_ROOT}"/} not found: make tree first"
  promtool=$(promtool_path)
  QUERIES=$(mktemp --suffix .yaml)
  trap 'rm -f "${QUERIES}"' EXIT
  (cd "${FORK_ROOT}" && go run ./hack/tools/monitoring "${metrics}" monitoring/alerts.yaml monitoring/dashboard.json "${QUERIES}")
  "${promtool}" check rules "${FORK_ROOT}/monitoring/alerts.yaml" "${QUERIES}"
  (cd "${FORK_ROOT}/monitoring" && "${promtool}" test rules alerts_test.yaml)
  "${promtool}" check config --syntax-only "${FORK_ROOT}/monitoring/scrape/prometheus.yml"
}

main "$@"
