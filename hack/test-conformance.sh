#!/usr/bin/env bash
# make test-conformance: upstream's [Conformance] suite against a kind cluster of this release.
#
# Builds the kind node image (make kind-image), the conformance images (hack/conformance-images.sh),
# upstream's e2e binary (test/e2e, all of it) and the ginkgo CLI from the tree; boots a kind cluster
# of one control plane and two workers (kind/conformance.yaml) with every image loaded under
# upstream's names; runs
#   ginkgo --nodes=N --focus='\[Conformance\]' e2e.test -- --provider=skeleton ...
# as upstream's and kind's conformance jobs do: the specs run N at a time, and those marked
# [Serial] (ginkgo's Serial decorator) run afterwards, one at a time; the user-visible flows use
# the stock kubectl built from the base commit. Writes the JUnit report and the log to
# _output/conformance/<date>/, prints one summary line (passed / failed / skipped, and the
# failures' names), and deletes the cluster (KIND_KEEP=1 keeps it). The specs that pull with
# imagePullPolicy: Always get the images from a registry on this host (hack/conformance-registry.sh).
#
#   CONFORMANCE_STOCK   1: the same suite (the same e2e binary) against a cluster of stock
#                       components, built from the base commit (KIND_STOCK=1 make kind-image), to
#                       compare with; its report goes to _output/conformance/<date>-stock/
#   CONFORMANCE_NODES   ginkgo processes (default 4)
#   CONFORMANCE_FOCUS   another focus, e.g. '\[sig-apps\].*\[Conformance\]' for a quick check
#   CONFORMANCE_SKIP    specs to skip (a regular expression; default none)
#   CONFORMANCE_RERUN   a report directory (e.g. _output/conformance/20261126T081135Z): run only
#                       the specs that failed in it (its summary.txt)
set -euo pipefail
[[ -z ${CONFORMANCE_STOCK:-} ]] || export KIND_STOCK=1
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
source "${FORK_ROOT}/hack/lib/kind.sh"

nodes=${CONFORMANCE_NODES:-4}
focus=${CONFORMANCE_FOCUS:-'\[Conformance\]'}
if [[ -n ${CONFORMANCE_RERUN:-} ]]; then
  # The failed specs' full texts, as ginkgo matches them (after the suite's description; JUnit
  # names start with "[It] ").
  focus=$(python3 - "${CONFORMANCE_RERUN}/summary.txt" <<'PY'
import re, sys
names = [l.split("FAILED: ", 1)[1].rstrip("\n") for l in open(sys.argv[1]) if "FAILED: " in l]
texts = [re.sub(r"^\[It\] ", "", n) for n in names]
print("|".join(re.sub(r"([\\.+*?()|\[\]{}^$])", r"\\\1", t) + "$" for t in texts) or "^$")
PY
  )
fi
skip=${CONFORMANCE_SKIP:-'^$'}
report=${FORK_OUTPUT}/conformance/$(date -u +%Y%m%dT%H%M%SZ)${KIND_STOCK:+-stock}
mkdir -p "${report}"

[[ -d ${KUBE_TREE}/.git ]] || "${FORK_ROOT}/hack/materialize.sh"
"${FORK_ROOT}/hack/kind-image.sh"
"${FORK_ROOT}/hack/node-images.sh" build-if-missing
"${FORK_ROOT}/hack/conformance-images.sh"
"${FORK_ROOT}/hack/build-stock-kubectl.sh"
log "building upstream's e2e binary (test/e2e) and the ginkgo CLI from the tree"
# Versioned as upstream's release stamps it: specs read their own version (Pod Security fixtures).
(cd "${KUBE_TREE}" && go test -c -ldflags "$(version_ldflags "$(fork_version)")" -o "${FORK_BIN}/e2e-conformance.test" ./test/e2e &&
  go build -o "${FORK_BIN}/ginkgo" github.com/onsi/ginkgo/v2/ginkgo)

# shellcheck disable=SC2317 # called by the trap
cleanup() { [[ -n ${KIND_KEEP:-} ]] || "${FORK_ROOT}/hack/kind-down.sh"; } # the registry too
trap cleanup EXIT
KIND_CONFIG=${FORK_ROOT}/kind/conformance.yaml "${FORK_ROOT}/hack/kind-up.sh"
export KUBECONFIG=${KIND_KUBECONFIG}
docker_up # the Docker engine that kind-up used (or started): DOCKER_HOST for kind load
log "loading the conformance images into the nodes"
for archive in "${FORK_OUTPUT}"/images/conformance/*.tar; do
  "${FORK_BIN}/kind" load image-archive --name "${KIND_CLUSTER}" "${archive}" >/dev/null
done
"${FORK_ROOT}/hack/conformance-registry.sh" up
"${FORK_BIN}/stock/kubectl" version >"${report}/version.txt"

log "conformance of ${KIND_IMAGE}: focus ${focus}, skip ${skip}, ${nodes} processes; report in ${report#"${FORK_ROOT}"/}"
start=${SECONDS}
status=0
"${FORK_BIN}/ginkgo" --nodes="${nodes}" --focus="${focus}" --skip="${skip}" --no-color --timeout=4h \
  --poll-progress-after=120s --poll-progress-interval=30s \
  "${FORK_BIN}/e2e-conformance.test" -- \
  --kubeconfig="${KUBECONFIG}" --provider=skeleton --kubectl-path="${FORK_BIN}/stock/kubectl" \
  --report-dir="${report}" --report-complete-junit --disable-log-dump=true \
  >"${report}/e2e.log" 2>&1 || status=$?
took=$((SECONDS - start))

# One line from the JUnit report: the selected specs that passed, failed, or skipped themselves at
# run time (the report lists every spec of the binary; those the focus did not select are skipped
# too), then the failures by name.
summary=$(python3 - "${report}" "${focus}" "${skip}" <<'PY'
import glob, re, sys, xml.etree.ElementTree as ET
report, focus, skip = sys.argv[1], re.compile(sys.argv[2]), re.compile(sys.argv[3])
passed, failed, skipped = [], [], []
for f in glob.glob(report + "/junit*.xml"):
    for case in ET.parse(f).getroot().iter("testcase"):
        name = case.get("name") or ""
        # What ginkgo's focus matched: the full text, without the "[It] " JUnit adds.
        text = re.sub(r"^\[It\] ", "", name)
        if not focus.search(text) or skip.search(text):
            continue  # not selected, or a suite node ([SynchronizedBeforeSuite] ...)
        if case.find("failure") is not None or case.find("error") is not None:
            failed.append(name)
        elif case.find("skipped") is not None:
            skipped.append(name)
        else:
            passed.append(name)
print(f"{len(passed)} passed, {len(failed)} failed, {len(skipped)} skipped")
for name in failed:
    print("  FAILED: " + name)
for name in skipped:
    print("  skipped: " + name)
PY
)
echo "${summary}" >"${report}/summary.txt"
log "conformance of ${KIND_IMAGE} in $(duration "${took}"): $(head -1 "${report}/summary.txt")"
tail -n +2 "${report}/summary.txt"
[[ ${status} -eq 0 ]] || die "conformance failed (exit ${status}): ${report#"${FORK_ROOT}"/}/e2e.log"
