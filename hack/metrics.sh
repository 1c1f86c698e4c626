#!/usr/bin/env bash
# make metrics: the WorkloadConfigSnapshot metrics (workload_config_snapshot_*) that the local
# cluster's kube-controller-manager serves (make up). kwokctl starts it with /metrics open to
# every client (--authorization-always-allow-paths); the script reads its address and the
# cluster's client certificate from the cluster's kwok.yaml, as kwokctl's own metrics use does.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

config=${LOCAL_DIR}/kwok/clusters/${LOCAL_CLUSTER}/kwok.yaml
[[ -f ${config} ]] || die "no local cluster: run 'make up' first"
# The metric endpoint of the kube-controller-manager component: host, certPath and keyPath.
read -r host cert key < <(awk '
  /^- args:/ { component = "" }
  /^  name: / { component = $2 }
  /^  metric:/ { in_metric = 1; next }
  in_metric && /^    host:/ { host = $2 }
  in_metric && /^    certPath:/ { cert = $2 }
  in_metric && /^    keyPath:/ { key = $2 }
  in_metric && !/^    / { in_metric = 0 }
  component == "kube-controller-manager" && host != "" { print host, cert, key; exit }
  /^  name: / && component != "kube-controller-manager" { host = ""; cert = ""; key = "" }
' "${config}")
[[ -n ${host:-} ]] || die "no metric endpoint of kube-controller-manager in ${config}"
metrics=$(curl --silent --show-error --insecure --cert "${cert}" --key "${key}" "https://${host}/metrics")
grep -E '^(# (HELP|TYPE) )?workload_config_snapshot_' <<<"${metrics}" ||
  echo "kube-controller-manager at ${host} serves no workload_config_snapshot_ metric yet (they appear with the first snapshot; is the gate on?)"
