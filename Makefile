# A patched Kubernetes v1.37.1 with ConfigMap/Secret snapshots for workloads.
# See README.md. Every target is a thin wrapper around a script in hack/.

SHELL := /usr/bin/env bash

# V=v1.37.z: another upstream patch release as the base (make tree V=v1.37.2; docs/development.md).
ifdef V
export KUBE_VERSION := $(V)
endif

.PHONY: all tree patches argo-rollouts argo-rollouts-patches test-argo-rollouts test-argo-rollouts-e2e build etcd generated verify test test-monitoring test-unit test-integration test-e2e test-upstream-e2e up down demo metrics bench chaos chaos-ha storm upgrade kind-image kind-up kind-down release test-release test-kubeadm test-kind test-conformance verify-series review-figures clean help

all: help

help:
	@echo "Kubernetes v1.37.1 with ConfigMap and Secret snapshots (README.md). Start here:"
	@echo "make up                build, then start a local cluster (kwok fake nodes) with the gate on (about 6.5 min cold)"
	@echo "make up NODES=real     the same with one real node (kubelet + containerd; root, Debian)"
	@echo "make test              monitoring, unit, integration and e2e tests (cold: docs/testing.md#make-test)"
	@echo "make demo              the user story on the local cluster"
	@echo "make down              stop the local cluster"
	@echo ""
	@echo "Everything else:"
	@echo "make tree              materialize Kubernetes v1.37.1 in _output/kubernetes and apply patches/ (V=v1.37.z: another patch release)"
	@echo "make patches           export the tree's commits back to patches/"
	@echo "make build             build the patched kube-apiserver, kube-controller-manager, kube-scheduler, kubectl into _output/bin"
	@echo "make etcd              build etcd (pinned in go.mod) into _output/bin"
	@echo "make generated         re-run the generators in the tree (STEPS='deepcopy protobuf ...' for some)"
	@echo "make verify            patches/, tree and generated files agree; upstream checks, lint; walk the series (times: docs/development.md)"
	@echo "make verify-series     every patch builds and passes its packages' tests at its own commit (long)"
	@echo "make review-figures    the engine's size, exported names and longest functions, and the largest patches"
	@echo "make metrics           the workload_config_snapshot_* metrics of the local kube-controller-manager"
	@echo "make bench             stock v1.37.1 vs patched kube-controller-manager in pairs, into docs/benchmarks.md (BENCH_SCALE=small|full|fanout|paced|mix|sweep|slo|rss, BENCH_QPS=unlimited, BENCH_GOMEMLIMIT, BENCH_PAIRS, BENCH_LATENCY_PAIRS)"
	@echo "make chaos             kill and restart kube-controller-manager during watched edits; check convergence and snapshots"
	@echo "make chaos-ha          the chaos on three kube-controller-managers with leader election and paced fan-out: kill and pause the leader, restart etcd, pause kube-apiserver"
	@echo "make storm             rewrite a watched ConfigMap 100 times in 10 s; check each kind makes at most 5 revisions"
	@echo "make upgrade           stock v1.37.1 control plane -> patched -> stock -> patched; check what rolls out at each step"
	@echo "make kind-image        a kind node image of the patched release, built here (KIND_IMAGES=auto|local|upstream)"
	@echo "make kind-up           a kind cluster from that image, gate on in every component"
	@echo "make release           _output/release: server tarball, control-plane image archives for RELEASE_REGISTRY, kind node image, SBOMs, release notes, SHA256SUMS"
	@echo "make test-release      the release on a kind cluster whose kubeadm pulls the control-plane images from a registry here; ConfigSnapshot e2e"
	@echo "make test-kubeadm      kubeadm for real on this host: init stock v1.37.1 from a registry here, upgrade to the release, the story, downgrade (root)"
	@echo "make kind-down         remove the kind cluster and the Docker engine kind-up started"
	@echo "make test-kind         kind-image, kind-up, the ConfigSnapshot e2e tests against it, kind-down"
	@echo "make test-conformance  upstream's [Conformance] suite against a kind cluster of this release (1 control plane, 2 workers), images built here; JUnit in _output/conformance; CONFORMANCE_STOCK=1 against stock v1.37.1"
	@echo "make test-monitoring   the alert rules and dashboard of monitoring/ against the metrics, and promtool's tests of the rules"
	@echo "make test-unit         the unit tests of the packages the series touches and upstream's suites around them"
	@echo "make test-integration  the integration tests (real kube-apiserver and etcd): the contract for each kind, the restriction, an extension controller"
	@echo "make test-e2e          the ConfigSnapshot e2e tests against the local cluster"
	@echo "make test-upstream-e2e upstream's [sig-apps] e2e tests against the local cluster"
	@echo "make argo-rollouts     Argo Rollouts v1.10.1 with patches/argo-rollouts/ on the release's modules: rollouts-controller, kubectl-argo-rollouts into _output/bin"
	@echo "make argo-rollouts-patches  export _output/argo-rollouts's commits back to patches/argo-rollouts/"
	@echo "make test-argo-rollouts  Argo Rollouts' own unit tests of the packages the series changes"
	@echo "make test-argo-rollouts-e2e  Argo Rollouts canaries a ConfigMap change, aborts and undoes it, on the local cluster (started with its writer)"
	@echo "make clean             remove _output (the tree, binaries, logs)"

tree:
	@hack/materialize.sh

patches:
	@hack/export-patches.sh

build: tree
	@hack/build.sh $(WHAT)

argo-rollouts: tree
	@hack/argo-rollouts.sh build

argo-rollouts-patches:
	@hack/argo-rollouts.sh patches

test-argo-rollouts: tree
	@hack/argo-rollouts.sh test

test-argo-rollouts-e2e: tree
	@hack/argo-rollouts-e2e.sh

etcd: tree
	@hack/install-etcd.sh

generated: tree
	@hack/update-generated.sh $(STEPS)

verify: tree
	@hack/verify.sh $(CHECKS)

verify-series: tree
	@hack/verify-series.sh

review-figures: tree
	@go run ./hack/tools/reviewfigures _output/kubernetes/staging/src/k8s.io/config-snapshot patches

test: tree
	@hack/test.sh

test-monitoring: tree
	@hack/test.sh monitoring

test-unit: tree
	@hack/test.sh unit

test-integration: tree
	@hack/test.sh integration

test-e2e: tree
	@hack/test-e2e.sh

test-upstream-e2e: tree
	@hack/test-e2e.sh upstream

up: build
	@hack/local-up.sh

down:
	@hack/local-down.sh

demo:
	@hack/demo.sh

metrics:
	@hack/metrics.sh

bench: tree
	@hack/bench.sh $(ARGS)

chaos: tree
	@hack/chaos.sh $(ARGS)

chaos-ha: tree
	@hack/chaos.sh -ha -max-rollouts 10 -workloads 100 -sources 3 -duration 3m -timeout 10m $(ARGS)

storm: tree
	@hack/chaos.sh -storm $(ARGS)

upgrade: tree
	@hack/upgrade.sh $(ARGS)

kind-image: tree
	@hack/kind-image.sh

kind-up:
	@hack/kind-up.sh

kind-down:
	@hack/kind-down.sh

test-kind: tree
	@hack/test-kind.sh

test-conformance: tree
	@hack/test-conformance.sh

clean:
	@if [ -d _output/local/kwok ]; then hack/local-down.sh; fi
	rm -rf _output

release: tree
	@hack/release.sh

test-release: tree
	@hack/test-release.sh

test-kubeadm: tree
	@hack/test-kubeadm.sh
