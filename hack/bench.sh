#!/usr/bin/env bash
# make bench: what the patched kube-controller-manager (gate on) costs against stock v1.37.1, side
# by side on one local cluster with fake nodes: the patched kube-apiserver with the gate on, the
# same etcd and the same data; the chaos program in its -bench mode (hack/chaos/bench.go) swaps the
# controller manager between the stock binary (built from the tree's pristine base commit) and the
# patched one, and runs the same scenarios in a fresh namespace for each, BENCH_PAIRS times in
# pairs whose order alternates. It prints one table (each figure the median of the pairs with its
# range, each target and whether it is met) and writes it to _output/bench/bench-<scale>.{json,md},
# stamped with the date, the series and repository commits, the controller managers' flags and the
# machine. Needs no running local cluster; stops the one it starts.
#
#   BENCH_SCALE=small   (default) 1,000 Secrets + 1,000 ConfigMaps of 12 KiB, 10 workloads of each
#                       kind without snapshot, 60 opt-in workloads, 50 Deployments sharing one
#                       watched ConfigMap, 3 pairs (BENCH_PAIRS); then P3's image edits alone, 20
#                       workloads per kind timed twice (40 samples a pair), and watched edits
#                       without the minimum interval of every other one beside stock's image
#                       edits, in 8 pairs of their own (BENCH_LATENCY_PAIRS), stock's and the
#                       patched controller manager side by side, each on a kube-apiserver of its
#                       own (a second one on the same etcd), their edits alternating edit by
#                       edit: about 18 minutes
#   BENCH_SCALE=full    10,000 + 10,000, 100 of each kind, 1,000 opt-in workloads across the three
#                       kinds, 40 per kind timed, 500 Deployments sharing one ConfigMap, 3 pairs
#   BENCH_SCALE=fanout  only the fan-out (P5), BENCH_FANOUT (2,000) Deployments sharing one watched
#                       ConfigMap, 3 pairs: _output/bench/fanout.md
#   BENCH_SCALE=paced   only the paced fan-out (P6), patched without and with a limit of rollouts per
#                       source (BENCH_PACED_LIMIT, 10): BENCH_FANOUT (500) Deployments of one replica
#                       sharing one watched ConfigMap, one edit, 3 pairs; _output/bench/paced.md
#   BENCH_SCALE=mix     only the fan-out over the three kinds (P7): BENCH_FANOUT (300) workloads, a third
#                       of each kind, sharing one watched ConfigMap; stock and patched template edits,
#                       one watched edit; exactly one new revision each; 3 pairs; _output/bench/mix.md
#   BENCH_SCALE=sweep   only the size and scale sweep: one change of a ConfigMap and of a Secret of
#                       BENCH_SWEEP_SIZES KiB (1,64,1000) shared by BENCH_SWEEP_SHARERS Deployments
#                       (100,500,2000), stock (a copy and every Deployment edited) then patched (the
#                       source edited), client rate limits lifted; the slopes of what it costs
#                       (etcd, watch bytes, time, memory); _output/bench/sweep.md
#   BENCH_SCALE=slo     only the KEP's objective, 99% of watched changes within 5 s: the patched
#                       controller manager alone, BENCH_SLO_WORKLOADS (100) of each kind edited one
#                       every BENCH_SLO_SPACING (500ms, 0.7 per second per controller), BENCH_SLO_ROUNDS
#                       (2) times: 600 changes; _output/bench/slo.md
#   BENCH_SCALE=rss     only P2 at full's size (10,000 + 10,000, 1,000 opt-in workloads), then
#                       kube-controller-manager's VmRSS and RssAnon right after a forced garbage
#                       collection and 60 and 180 s later, and every second meanwhile
#                       (_output/bench/rss-<namespace>.csv), 2 pairs; _output/bench/rss.md.
#                       BENCH_GOMEMLIMIT (e.g. 1GiB) runs both controller managers with that
#                       GOMEMLIMIT: _output/bench/rss-gomemlimit.md
#   BENCH_QPS=unlimited lifts every client-side rate limit in both runs; the results are written
#                       as <name>-unlimited.{json,md}
# The fan-outs (P5, P6, P7) add their cost per revision: requests by verb, resource and response
# code, kube-apiserver CPU time and loopback requests, etcd writes and bytes.
# Each run also replaces its section of docs/benchmarks.md, which holds the latest run of each.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

export KUBECONFIG=${LOCAL_KUBECONFIG}
if [[ -f ${KUBECONFIG} ]] && "${FORK_BIN}/kubectl" get --raw /readyz >/dev/null 2>&1; then
  die "a local cluster is running: 'make down' first (make bench starts its own)"
fi
case ${BENCH_SCALE:=small} in
  small) scale=(-bench-objects 1000 -bench-workloads 10 -bench-optin 60 -bench-fanout 50 -bench-latency 20 -bench-spacing 200ms -bench-settle 5s -bench-pairs "${BENCH_PAIRS:-3}" -bench-latency-pairs "${BENCH_LATENCY_PAIRS:-8}" -bench-twin -bench-image-rounds 2) ;;
  full) scale=(-bench-objects 10000 -bench-workloads 100 -bench-optin 1000 -bench-fanout 500 -bench-latency 40 -bench-spacing 250ms -bench-pairs "${BENCH_PAIRS:-3}") ;;
  fanout) scale=(-bench-objects 0 -bench-scenarios p5 -bench-fanout "${BENCH_FANOUT:-2000}" -bench-pairs "${BENCH_PAIRS:-3}") ;;
  paced) scale=(-bench-objects 0 -bench-scenarios p6 -bench-fanout "${BENCH_FANOUT:-500}" -bench-paced-limit "${BENCH_PACED_LIMIT:-10}" -bench-pairs "${BENCH_PAIRS:-3}") ;;
  mix) scale=(-bench-objects 0 -bench-scenarios p7 -bench-fanout "${BENCH_FANOUT:-300}" -bench-pairs "${BENCH_PAIRS:-3}") ;;
  sweep) scale=(-bench-objects 0 -bench-scenarios sweep -bench-unlimited -bench-sweep-sizes "${BENCH_SWEEP_SIZES:-1,64,1000}" -bench-sweep-sharers "${BENCH_SWEEP_SHARERS:-100,500,2000}") ;;
  slo) scale=(-bench-objects 0 -bench-scenarios slo -bench-latency "${BENCH_SLO_WORKLOADS:-100}" -bench-spacing "${BENCH_SLO_SPACING:-500ms}" -bench-slo-rounds "${BENCH_SLO_ROUNDS:-2}") ;;
  rss) scale=(-bench-objects "${BENCH_RSS_OBJECTS:-10000}" -bench-optin "${BENCH_RSS_OPTIN:-1000}" -bench-scenarios rss -bench-pairs "${BENCH_PAIRS:-2}") ;;
  *) die "BENCH_SCALE is small, full, fanout, paced, mix, sweep, slo or rss, not ${BENCH_SCALE}" ;;
esac
# BENCH_QPS=unlimited lifts every client-side rate limit in both runs (the controller managers'
# --kube-api-qps and --kube-api-burst, the bench's own client): time then measures work, not QPS.
suffix=''
case ${BENCH_QPS:=default} in
  default) ;;
  unlimited) scale+=(-bench-unlimited) suffix=-unlimited ;;
  *) die "BENCH_QPS is default or unlimited, not ${BENCH_QPS}" ;;
esac
if [[ -n ${BENCH_GOMEMLIMIT:-} ]]; then
  [[ ${BENCH_SCALE} == rss ]] || die "BENCH_GOMEMLIMIT is for BENCH_SCALE=rss"
  scale+=(-bench-gomemlimit "${BENCH_GOMEMLIMIT}") suffix+=-gomemlimit
fi
# BENCH_MIN_INTERVAL (e.g. 0: no batch window) is the patched controller manager's
# --workload-config-snapshot-min-interval; the results are written as <name>-min-interval-<d>.*,
# a section of docs/benchmarks.md only where it has one.
if [[ -n ${BENCH_MIN_INTERVAL:-} ]]; then
  scale+=(-bench-patched-min-interval "${BENCH_MIN_INTERVAL}") suffix+=-min-interval-${BENCH_MIN_INTERVAL}
fi
"${FORK_ROOT}/hack/build.sh"
"${FORK_ROOT}/hack/build-stock-kubectl.sh" kube-controller-manager
build_chaos

# P4: one sync of a Deployment at rest that mounts four ConfigMaps without snapshot, in the stock
# tree and in the patched tree with the feature on (hack/bench/sync_bench_test.go, copied into
# each tree to build its test binary: build_p4). The two binaries run in turn, p4_rounds (30) times each, the first
# of each pair alternating (this machine's CPU time drifts by 10% from one minute to the next),
# 3,000 syncs a round: the ratio of each round's two CPU times per sync (cpu-ns/op, getrusage),
# judged over the 30 rounds (a bootstrap of their median, as the pairs' figures), their wall times
# (ns/op), and their allocations per sync, which do not drift. Until 2026-12-03 17:30 it judged
# the wall time, which the machine's other tenants and steal add to.
# Until 2026-12-03 it was 11 rounds of 5,000 syncs, whose interval (0.988-1.051 against a target of
# 1.05x) came out on either side of the target from one run to the next.
mkdir -p "${FORK_OUTPUT}/bench"
# P2's heap profiles, kept per scale (_output/bench/heap-<scale>/) until that scale runs again.
heaps=${FORK_OUTPUT}/bench/heap-${BENCH_SCALE}${suffix}
rm -f "${FORK_OUTPUT}"/bench/heap-bench-*.pprof
# p4 measures P4 into p4_{stock,patched}{,_allocs}; only small and full run it.
p4_stock='' p4_patched='' p4_stock_wall='' p4_patched_wall='' p4_stock_allocs='' p4_patched_allocs=''
p4() {
  rm -f "${FORK_OUTPUT}"/bench/p4-*
  log "P4: Go benchmarks of one Deployment sync, stock and patched trees"
  build_p4 "${FORK_OUTPUT}/stock-kubernetes" stock "${FORK_OUTPUT}/bench/p4-stock.test" || die "P4: the benchmark does not build in the stock tree"
  build_p4 "${KUBE_TREE}" patched "${FORK_OUTPUT}/bench/p4-patched.test" || die "P4: the benchmark does not build in ${KUBE_TREE}"
  p4_rounds=30
  for round in $(seq "${p4_rounds}"); do
    order=(stock patched)
    ((round % 2)) || order=(patched stock)
    for shim in "${order[@]}"; do
      "${FORK_OUTPUT}/bench/p4-${shim}.test" -test.run '^$' -test.bench BenchmarkForkSyncDeployment -test.benchtime 3000x -test.benchmem >>"${FORK_OUTPUT}/bench/p4-${shim}.txt" 2>&1
    done
  done
  # p4_rounds prints the figure of unit $2 (cpu-ns/op, ns/op, allocs/op) of the tree's rounds,
  # comma-separated: round i of both trees is compared as pair i of the bench's figures are.
  p4_rounds() {
    awk -v unit="$2" '/^BenchmarkForkSyncDeployment/ { for (i = 3; i <= NF; i++) if ($i == unit) print $(i - 1) }' "${FORK_OUTPUT}/bench/p4-$1.txt" | paste -sd,
  }
  p4_stock=$(p4_rounds stock cpu-ns/op)
  p4_patched=$(p4_rounds patched cpu-ns/op)
  p4_stock_wall=$(p4_rounds stock ns/op)
  p4_patched_wall=$(p4_rounds patched ns/op)
  p4_stock_allocs=$(p4_rounds stock allocs/op)
  p4_patched_allocs=$(p4_rounds patched allocs/op)
  [[ -n ${p4_stock} && -n ${p4_patched} && -n ${p4_stock_allocs} && -n ${p4_patched_allocs} ]] || die "P4 benchmarks failed: see ${FORK_OUTPUT}/bench/p4-*.txt"
}
[[ ${BENCH_SCALE} == small || ${BENCH_SCALE} == full ]] && p4

# Fake nodes of 1,000 pods each: BENCH_SCALE=full runs 600 pods of workloads that do not opt in.
NODES=${NODES:-2} FAKE_NODE_PODS=1000 "${FORK_ROOT}/hack/local-up.sh"
# shellcheck disable=SC2317 # called by the trap
# A run that fails keeps the components' logs (kwokctl removes them with the cluster) in
# _output/bench/logs-<scale>/, so that a controller manager that did not come up can be read.
cleanup() {
  local rc=$?
  if ((rc != 0)); then
    rm -rf "${FORK_OUTPUT}/bench/logs-${BENCH_SCALE}"
    cp -r "${LOCAL_DIR}/kwok/clusters/${LOCAL_CLUSTER}/logs" "${FORK_OUTPUT}/bench/logs-${BENCH_SCALE}" 2>/dev/null &&
      log "the run failed: the cluster's logs are in _output/bench/logs-${BENCH_SCALE}"
  fi
  # The second kube-apiserver and controller manager of P3's image edits (-bench-twin), which
  # kwokctl does not know, if the bench did not stop them.
  local pid_file
  for pid_file in "${LOCAL_DIR}/kwok/clusters/${LOCAL_CLUSTER}"/pids/*-twin.pid; do
    [[ ! -f ${pid_file} ]] || kill "$(cat "${pid_file}")" 2>/dev/null || true
  done
  "${FORK_ROOT}/hack/local-down.sh"
}
trap cleanup EXIT
read -r host cert key < <(kcm_metric_endpoint)
# The bench's commit: the repository's last commit that changed anything but its documentation
# (the bench writes docs/benchmarks.md, and committing a run's section changes no bench), "-dirty"
# when anything but the documentation differs from it.
repo_commit=$(git -C "${FORK_ROOT}" log -1 --format=%h -- . ':!docs' ':!*.md')
git -C "${FORK_ROOT}" diff --quiet HEAD -- . ':!docs' ':!*.md' || repo_commit+=-dirty
log "bench (BENCH_SCALE=${BENCH_SCALE}): stock and patched kube-controller-manager in pairs"
"${FORK_BIN}/chaos" -bench -kubeconfig "${KUBECONFIG}" \
  -kcm-pid-file "${LOCAL_DIR}/kwok/clusters/${LOCAL_CLUSTER}/pids/kube-controller-manager.pid" \
  -stock "${FORK_BIN}/stock" -patched "${FORK_BIN}" -kubectl "${FORK_BIN}/kubectl" \
  -kcm-metrics "https://${host}/metrics" -kcm-cert "${cert}" -kcm-key "${key}" -bench-out "${FORK_OUTPUT}/bench" \
  -bench-series "$(git -C "${KUBE_TREE}" rev-parse HEAD)" -bench-tree "$(git -C "${KUBE_TREE}" rev-parse 'HEAD^{tree}')" -bench-repo "${repo_commit}" -bench-scale "${BENCH_SCALE}" \
  -p4-stock-ns "${p4_stock}" -p4-patched-ns "${p4_patched}" -p4-stock-allocs "${p4_stock_allocs}" -p4-patched-allocs "${p4_patched_allocs}" \
  -p4-stock-wall "${p4_stock_wall}" -p4-patched-wall "${p4_patched_wall}" "${scale[@]}" "$@"

# What the patched controller manager's heap holds more than stock's at P2's reading, all pairs
# merged (heap profiles sample about one allocation per 512 KiB: small differences are noise).
# The in-use difference says what the patched one holds more; the allocated one (alloc_space,
# since the process started) what it allocated more on the way, which is what raises the heap's
# peak and so the idle memory the runtime keeps.
shopt -s nullglob
stock_heaps=("${FORK_OUTPUT}"/bench/heap-bench-stock-*.pprof)
patched_heaps=("${FORK_OUTPUT}"/bench/heap-bench-patched-*.pprof)
# The run's table: _output/bench/<result>.md.
case ${BENCH_SCALE} in
  small | full) result=bench-${BENCH_SCALE}${suffix} ;;
  *) result=${BENCH_SCALE}${suffix} ;;
esac
if ((${#stock_heaps[@]} && ${#patched_heaps[@]})) && [[ ${BENCH_SCALE} == small || ${BENCH_SCALE} == full || ${BENCH_SCALE} == rss ]]; then
  rm -rf "${heaps}" && mkdir -p "${heaps}"
  mv "${stock_heaps[@]}" "${patched_heaps[@]}" "${heaps}/"
  go tool pprof -proto "${heaps}"/heap-bench-stock-*.pprof >"${heaps}/stock.pb.gz" 2>/dev/null
  go tool pprof -proto "${heaps}"/heap-bench-patched-*.pprof >"${heaps}/patched.pb.gz" 2>/dev/null
  for index in inuse_space alloc_space; do
    case ${index} in
      inuse_space) what='in use' ;;
      alloc_space) what='allocated since the process started' ;;
    esac
    printf '\nP2 heap profile, patched minus stock, %s, the %d pairs together (go tool pprof -sample_index=%s -top -diff_base; profiles in %s), the ten largest differences by allocation site:\n\n```\n' \
      "${what}" "${#stock_heaps[@]}" "${index}" "${heaps#"${FORK_ROOT}"/}"
    go tool pprof -sample_index="${index}" -top -nodecount=10 -diff_base "${heaps}/stock.pb.gz" "${heaps}/patched.pb.gz" 2>/dev/null | sed -n '/flat%/,$p'
    printf '```\n'
  done >>"${FORK_OUTPUT}/bench/${result}.md"
fi
shopt -u nullglob

# The run's section of docs/benchmarks.md (between its markers) becomes this run's table.
doc=${FORK_ROOT}/docs/benchmarks.md
if [[ -f ${FORK_OUTPUT}/bench/${result}.md ]] && grep -q "^<!-- bench:${BENCH_SCALE}${suffix} -->$" "${doc}"; then
  awk -v scale="${BENCH_SCALE}${suffix}" -v table="${FORK_OUTPUT}/bench/${result}.md" '
    $0 == "<!-- bench:" scale " -->" { print; while ((getline line < table) > 0) print line; skip = 1; next }
    $0 == "<!-- /bench:" scale " -->" { skip = 0 }
    !skip { print }' "${doc}" >"${doc}.new" && mv "${doc}.new" "${doc}"
  log "docs/benchmarks.md: the ${BENCH_SCALE}${suffix} section is this run's"
  "${FORK_ROOT}/hack/bench-summary.sh"
fi
