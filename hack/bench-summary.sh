#!/usr/bin/env bash
# Writes the summary of docs/benchmarks.md (between <!-- bench:summary --> and its end marker)
# from the sections that make bench wrote below it: one row per run (when, which tree, pairs,
# rate limits, how many targets met, missed and undecided), one row per figure that has a
# target, with its interval and verdict as its run judged it, and what a fan-out (P5) costs the
# control plane per revision on both sides. Nothing in it is typed by hand, so
# it cannot say what no run measured; a section of a tree other than the series' (a run of an
# earlier release) is marked as such, and says whether the binaries it ran are the series' (the
# trees differ only in files none of them is built from: see same_build). make bench runs it
# after each run.
#
#   hack/bench-summary.sh          rewrite the summary
#   hack/bench-summary.sh --check  fail when the summary is not what the sections say (make verify)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

doc=${BENCH_DOC:-${FORK_ROOT}/docs/benchmarks.md}
grep -q '^<!-- bench:summary -->$' "${doc}" || die "${doc} has no <!-- bench:summary --> marker"
tree=unknown
if [[ -d ${KUBE_TREE}/.git ]]; then
  tree=$(git -C "${KUBE_TREE}" rev-parse 'HEAD^{tree}' | cut -c1-12)
fi

TMP_DIR=$(mktemp -d)
trap 'rm -rf "${TMP_DIR}"' EXIT

# bench_build_dirs: the tree's directories of the Go packages that what make bench runs is built
# from, one a line: the four release binaries (hack/build.sh), P4's test binary (the Deployment
# controller's package with its tests) and the chaos program (hack/chaos, staged in the tree).
bench_build_dirs() {
  stage_chaos
  (cd "${KUBE_TREE}" && go list -deps -test -f '{{.Dir}}' ./cmd/kube-apiserver ./cmd/kube-controller-manager \
    ./cmd/kube-scheduler ./cmd/kubectl ./pkg/controller/deployment ./test/e2e_fork/chaos) |
    sed -n "s|^${KUBE_TREE}/||p" | sort -u
}

# same_build TREE: 0 when TREE (a tree id, as a section's run line gives it) differs from the
# tree's HEAD only in files that nothing make bench runs is built from: no changed path is in or
# under a directory of bench_build_dirs, and none is a go.mod, go.sum or go.work. A run of TREE
# then ran the series' code; only the version stamp, which names the tree, differs. Fails when
# TREE is not in the tree's repository.
same_build() {
  local id
  id=$(git -C "${KUBE_TREE}" rev-parse --verify -q "$1^{tree}") || return 1
  git -C "${KUBE_TREE}" diff --name-only "${id}" 'HEAD^{tree}' >"${TMP_DIR}/changed" || return 1
  [[ -s ${TMP_DIR}/build-dirs ]] || bench_build_dirs >"${TMP_DIR}/build-dirs" || return 1
  awk 'NR == FNR { dir[$0] = 1; next }
    $0 ~ /(^|\/)go\.(mod|sum|work)$/ { found = 1; exit }
    { for (d = $0; sub(/\/[^\/]*$/, "", d) > 0;) if (d in dir) { found = 1; exit } }
    END { exit found }' "${TMP_DIR}/build-dirs" "${TMP_DIR}/changed"
}

# tree_labels: "TREE LABEL" a line for each tree that a section names and that is not the series':
# LABEL says whether its binaries are the series'.
tree_labels() {
  local t
  sed -n 's/^Run: .*, tree \([0-9a-f]*\) .*/\1/p' "${doc}" | sort -u | while IFS= read -r t; do
    [[ ${t} != "${tree}" ]] || continue
    if [[ ${tree} != unknown ]] && same_build "${t}"; then
      echo "${t} (the series' binaries: no file they are built from differs)"
    else
      echo "${t} (**not the series**)"
    fi
  done
}

# summarize prints the summary's body from the sections of the document on its input.
summarize() {
  awk -v tree="${tree}" -v labels="${TMP_DIR}/labels" '
    BEGIN { while ((getline line < labels) > 0) { t = line; sub(/ .*/, "", t); label[t] = line } }
    function trim(s) { gsub(/^[ \t]+|[ \t]+$/, "", s); return s }
    # verdict turns a table'"'"'s "met" cell into met, missed or undecided with its interval.
    function verdict(cell,    v) {
      v = cell
      sub(/^yes/, "met", v); sub(/^\*\*no\*\*/, "**missed**", v)
      return v
    }
    function count(sec, cell) {
      if (cell ~ /^yes/) met[sec]++
      else if (cell ~ /^\*\*no\*\*/) missed[sec]++
      else if (cell ~ /^undecided/) undecided[sec]++
    }
    /^<!-- bench:summary -->$/ { next }
    /^<!-- bench:[a-z-]+ -->$/ {
      sec = $0; sub(/^<!-- bench:/, "", sec); sub(/ -->$/, "", sec)
      order[++n] = sec; inside = 1; header = ""; next
    }
    /^<!-- \/bench:[a-z-]+ -->$/ { inside = 0; next }
    !inside { next }
    !/^\|/ { intable = 0 }
    /^Run: / {
      line = $0
      when[sec] = line; sub(/^Run: /, "", when[sec]); sub(/Z, series.*/, "", when[sec]); sub(/T/, " ", when[sec]); sub(/:[0-9][0-9]$/, "", when[sec])
      t = line; sub(/.*, tree /, "", t); sub(/ .*/, "", t); treeof[sec] = t
      p = line; sub(/.*, [A-Z_]+=[a-z]+, /, "", p); sub(/, client rate limits.*/, "", p); gsub(/ pairs?/, "", p); pairs[sec] = p
      l = line; sub(/.*client rate limits /, "", l); sub(/,.*/, "", l); limits[sec] = l
      took[sec] = line; sub(/.*took /, "", took[sec]); sub(/\.$/, "", took[sec])
      next
    }
    /^\|/ {
      nf = split($0, c, "|")
      for (i = 2; i < nf; i++) c[i] = trim(c[i])
      # The first row of a table is its header: only the tables headed "scenario" and "stock"
      # (the figures, with their targets; not the verdicts against the previous run) and "kind"
      # (the objective of BENCH_SCALE=slo) are read.
      if (!intable) { intable = 1; header = c[2]; if (c[3] != "stock" && header == "scenario") header = "other"; next }
      if (c[2] ~ /^-+$/) next
      if (header == "scenario" && c[6] != "-" && c[6] != "") {
        count(sec, c[7])
        rows[++m] = sprintf("| %s | %s | %s | %s | %s | %s | %s |", sec, c[2], c[3], c[4], c[5], c[6], verdict(c[7]))
      } else if (header == "scenario" && c[2] ~ /^P5 .*(per new revision|RSS after the edit)/) {
        # What a fan-out costs the control plane per revision, on both sides: no target.
        rows[++m] = sprintf("| %s | %s | %s | %s | %s | - | - |", sec, c[2], c[3], c[4], c[5])
      }
      # The objective of BENCH_SCALE=slo: the share of watched edits over 5 s, per kind and all.
      if (header == "kind" && nf >= 12) {
        count(sec, c[10])
        share = c[9]; sub(/ \(.*/, "", share); iv = c[9]; sub(/^[^(]*/, "", iv)
        rows[++m] = sprintf("| %s | watched edits over 5 s, %s (%s) | - | %s | - | at most 1%% | %s %s |", sec, c[2], c[3], share, verdict(c[10]), iv)
      }
    }
    END {
      print "| section | run (UTC) | tree | pairs | client rate limits | took | met | missed | undecided |"
      print "|---|---|---|---|---|---|---|---|---|"
      for (i = 1; i <= n; i++) {
        s = order[i]
        t = treeof[s]
        if (t != tree) t = (t in label) ? label[t] : t " (**not the series**)"
        printf "| %s | %s | %s | %s | %s | %s | %d | %d | %d |\n", s, when[s], t, pairs[s], limits[s], took[s], met[s], missed[s], undecided[s]
      }
      print ""
      print "| section | figure | stock | patched | ratio | target | verdict (interval) |"
      print "|---|---|---|---|---|---|---|"
      for (i = 1; i <= m; i++) print rows[i]
    }'
}

{
  echo "Written by hack/bench-summary.sh from the sections below (make bench runs it after each run):"
  echo "every run, every figure that has a target as its run judged it, and P5's control plane per"
  echo "revision (kube-apiserver's and kube-controller-manager's CPU, etcd and watch bytes, no target)."
  echo "The series (release $(<"${FORK_ROOT}/hack/RELEASE")) is tree ${tree}; a section whose run was of another tree says so,"
  echo "and whether the binaries it ran are the series' (the trees differ only in files that none of them is built from)."
  echo
  tree_labels >"${TMP_DIR}/labels"
  summarize <"${doc}"
} >"${TMP_DIR}/summary"

awk -v summary="${TMP_DIR}/summary" '
  $0 == "<!-- bench:summary -->" { print; while ((getline line < summary) > 0) print line; skip = 1; next }
  $0 == "<!-- /bench:summary -->" { skip = 0 }
  !skip { print }' "${doc}" >"${TMP_DIR}/doc"

if [[ ${1:-} == --check ]]; then
  if ! diff -u "${doc}" "${TMP_DIR}/doc" >&2; then
    echo "the summary of docs/benchmarks.md is not what its sections say: run hack/bench-summary.sh" >&2
    exit 1
  fi
  exit 0
fi
cp "${TMP_DIR}/doc" "${doc}"
