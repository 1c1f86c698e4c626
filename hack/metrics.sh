#!/usr/bin/env bash
# make metrics: the WorkloadConfigSnapshot metrics (workload_config_snapshot_*) that the local
# cluster's kube-controller-manager serves (make up). kwokctl starts it with /metrics open to
# every client (--authorization-always-allow-paths); kcm_metric_endpoint (lib/common.sh) reads
# its address and the cluster's client certificate from the cluster's kwok.yaml.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

read -r host cert key < <(kcm_metric_endpoint)
[[ -n ${host:-} ]] || die "no metric endpoint of kube-controller-manager in the local cluster's kwok.yaml"
metrics=$(curl --silent --show-error --insecure --cert "${cert}" --key "${key}" "https://${host}/metrics")
grep -E '^(# (HELP|TYPE) )?workload_config_snapshot_' <<<"${metrics}" ||
  echo "kube-controller-manager at ${host} serves no workload_config_snapshot_ metric yet (they appear with the first snapshot; is the gate on?)"
