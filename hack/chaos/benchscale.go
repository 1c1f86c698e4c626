/*
Copyright 2026 The Kubernetes Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// What the bench needs at production scale (BENCH_SCALE=full, BENCH_SCALE=fanout): many objects
// created in parallel, opt-in workloads of the three kinds with sources of their own, and the
// API calls of the fan-out by verb.
var (
	benchOptIn   = flag.Int("bench-optin", 60, "with -bench: opt-in workloads across the three kinds for P2, each snapshotting and watching a 12 KiB ConfigMap of its own")
	benchOnly    = flag.String("bench-scenarios", "all", "with -bench: all, p5 (only the fan-out: BENCH_SCALE=fanout) p6 (only the paced fan-out, patched without and with a limit: BENCH_SCALE=paced) p7 (only the fan-out over the three kinds: BENCH_SCALE=mix) sweep (source size x sharers: BENCH_SCALE=sweep) slo (watched edits against the KEP's 99% within 5 s, patched only: BENCH_SCALE=slo) or rss (P2 alone, then the memory after a forced GC: BENCH_SCALE=rss)")
	benchWriters = flag.Int("bench-writers", 8, "with -bench: parallel writers that create the bench's data")
)

// configValue is the content of the bench's 12 KiB sources: between an application's config file
// (a few KiB) and a Helm release Secret (tens of KiB); 20,000 of them with their revisions stay well
// below etcd's default 2 GiB quota.
var configValue = strings.Repeat("x", 12*1024)

// parallel runs create(i) for i in [0, n) on *benchWriters goroutines and returns the first error.
func parallel(n int, create func(i int) error) error {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		next  int
	)
	for w := 0; w < *benchWriters; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				stop := first != nil || i >= n
				mu.Unlock()
				if stop {
					return
				}
				if err := create(i); err != nil {
					mu.Lock()
					if first == nil {
						first = fmt.Errorf("item %d: %w", i, err)
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// createOptIn creates P2's opt-in workloads in ns, across the three kinds, without pods: each
// snapshots and watches a 12 KiB ConfigMap of its own. Stock ignores the fields; so that both
// controller managers cache the same objects, stock's run also gets one 12 KiB copy per source,
// as a user without the feature keeps (kustomize's hash-named ConfigMaps), where the patched
// controller manager makes the snapshot.
func createOptIn(ctx context.Context, c kubernetes.Interface, ns string, patched bool) ([]workload, error) {
	ws := make([]workload, *benchOptIn)
	err := parallel(*benchOptIn, func(i int) error {
		kind := benchKinds[i%len(benchKinds)]
		w := workload{kind, fmt.Sprintf("optin-%s-%d", strings.ToLower(kind), i), fmt.Sprintf("optin-%d", i)}
		ws[i] = w
		if err := createConfig(ctx, c, ns, w.source, configValue); err != nil {
			return err
		}
		if !patched {
			if err := createConfig(ctx, c, ns, w.source+"-copy", configValue); err != nil {
				return err
			}
		}
		return createWith(ctx, c, ns, w, 0)
	})
	return ws, err
}

// kcmPeakRSS returns kube-controller-manager's peak resident memory since it started, in MiB.
func kcmPeakRSS() (float64, error) { return kcmStatus("VmHWM:") }

// waitTimeout is how long to wait for n workloads to make a revision: kube-controller-manager's
// clients make 20 requests a second, and a revision costs a few.
func waitTimeout(n int) time.Duration {
	return 5*time.Minute + time.Duration(n)*300*time.Millisecond
}

// benchOwn is true for the requests that the bench itself makes in P5 and P7: its workload
// patches, its lists, and the watches.
func benchOwn(key string) bool {
	for _, own := range []string{"request PATCH deployments ", "request PATCH daemonsets ", "request PATCH statefulsets ", "request LIST ", "request WATCH ", "time "} {
		if strings.HasPrefix(key, own) {
			return true
		}
	}
	return false
}

// fanOutCallsTable returns P5's costs per revision as Markdown: the first edit of each side
// (template edits), then the second (stock's second template edit, the patched watched
// ConfigMap edit); each is a run's benchRun.
func fanOutCallsTable(stock, patched *benchRun) string {
	return costTable(fmt.Sprintf("P5 cost per new revision (N = %d, first pair), all clients but the bench's own Deployment patches, lists and watches: requests by verb, resource and response code, kube-apiserver CPU time, its loopback client's requests (the admission plugin's reads among them) and etcd's writes:", *benchFanOut),
		[]string{"stock template edit", "patched template edit", "stock second template edit", "patched watched ConfigMap edit"},
		[]costs{stock.fanOutCalls, patched.fanOutCalls, stock.fanOutWatched, patched.fanOutWatched})
}

// fanOutScenario is P5: N Deployments that snapshot and watch one ConfigMap; the time from a
// template edit of every one to the last new ReplicaSet, then (patched) from one edit of the
// ConfigMap to the last new ReplicaSet, with the API server's requests per revision by verb, and
// the controller manager's peak memory.
func fanOutScenario(ctx context.Context, c kubernetes.Interface, ns string, patched bool, out *benchRun) error {
	f := out.figures
	step(fmt.Sprintf("bench:   P5 fan-out (%d Deployments)", *benchFanOut))
	// A ConfigMap of their own: its edit rolls exactly these Deployments.
	if err := createConfig(ctx, c, ns, "fan", "v1"); err != nil {
		return err
	}
	var fan []string
	for i := 0; i < *benchFanOut; i++ {
		name := fmt.Sprintf("fan-%d", i)
		if err := createBenchDeployment(ctx, c, ns, name, "fan", true); err != nil {
			return err
		}
		fan = append(fan, name)
	}
	if err := waitRevision(ctx, c, ns, fan, 1); err != nil {
		return err
	}
	// Every status write of the first revisions done: none is left to coalesce with the edit's.
	if err := waitSettled(ctx, c, ns, fan); err != nil {
		return err
	}
	snapshotCallsBefore, err := kcmSnapshotCalls()
	if err != nil {
		return err
	}
	callsBefore, err := readCosts(ctx, c)
	if err != nil {
		return err
	}
	// Timed by a watch, as the control plane's costs are read around it: no polling list of
	// the bench's own adds to kube-apiserver's CPU time while the revisions are made.
	_, last, err := timeRevisions(ctx, c, ns, fan, 2, func() error { return setImages(ctx, c, ns, fan, "registry.k8s.io/pause:3.10.1") })
	if err != nil {
		return err
	}
	f["p5-template"] = last.Seconds()
	snapshotCallsAfter, err := kcmSnapshotCalls()
	if err != nil {
		return err
	}
	f["p1-per-revision"] = (snapshotCallsAfter - snapshotCallsBefore) / float64(len(fan))
	// The controllers finish the status updates of the new revisions before the next reading.
	if err := waitSettled(ctx, c, ns, fan); err != nil {
		return err
	}
	time.Sleep(*benchSettle)
	callsAfter, err := readCosts(ctx, c)
	if err != nil {
		return err
	}
	out.fanOutCalls = per(callsBefore, callsAfter, len(fan), benchOwn)
	f["p5-requests-template"], f["p5-kcm-requests-template"] = out.fanOutCalls.total(), out.fanOutCalls.controllerManagerRequests()
	controlPlane(f, "template", out.fanOutCalls, callsAfter, len(fan), last)
	// The second edit, the third revision of each Deployment: patched, one edit of the
	// ConfigMap; stock, a second template edit of every Deployment, so that the watched edit is
	// compared with stock in the same state (the upstream controller lists every ReplicaSet of
	// the namespace at each sync: a third revision lists more than a second).
	second := func() error { return setImages(ctx, c, ns, fan, "registry.k8s.io/pause:3.9") }
	if patched {
		second = func() error { return setConfig(ctx, c, ns, "fan", "v2") }
		// Past the minimum interval since the revisions just made (the settle above counts).
		time.Sleep(max(0, *benchMinInterval+time.Second-*benchSettle))
	}
	if callsBefore, err = readCosts(ctx, c); err != nil {
		return err
	}
	if _, last, err = timeRevisions(ctx, c, ns, fan, 3, second); err != nil {
		return err
	}
	f["p5-source"] = last.Seconds()
	if err := waitSettled(ctx, c, ns, fan); err != nil {
		return err
	}
	time.Sleep(*benchSettle)
	if callsAfter, err = readCosts(ctx, c); err != nil {
		return err
	}
	out.fanOutWatched = per(callsBefore, callsAfter, len(fan), benchOwn)
	f["p5-requests-source"], f["p5-kcm-requests-source"] = out.fanOutWatched.total(), out.fanOutWatched.controllerManagerRequests()
	controlPlane(f, "source", out.fanOutWatched, callsAfter, len(fan), last)
	f["p5-peak-rss"], err = kcmPeakRSS()
	return err
}

// setImages sets the image of the container of each Deployment of names in namespace ns: a
// template edit, one patch per Deployment.
func setImages(ctx context.Context, c kubernetes.Interface, ns string, names []string, image string) error {
	patch := []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"` + image + `"}]}}}}`)
	for _, name := range names {
		if _, err := c.AppsV1().Deployments(ns).Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
			return err
		}
	}
	return nil
}

// fanOutResults are P5's figures: time and requests per revision of the template edits, and of
// the patched watched ConfigMap edit against stock's second template edit; col returns a figure
// of a mode's runs, pair by pair.
func fanOutResults(col func(mode, key string) []float64) []benchResult {
	return []benchResult{
		compare("P5 fan-out: template edit of N Deployments", "seconds", col("stock", "p5-template"), col("patched", "p5-template"), atMostRatio(1.1),
			fmt.Sprintf("N = %d that snapshot one shared ConfigMap (stock ignores the fields); edit → every Deployment has its new ReplicaSet", *benchFanOut)),
		compare("P5 fan-out: one watched ConfigMap edit, N Deployments", "seconds", col("stock", "p5-source"), col("patched", "p5-source"), atMostRatio(1.1),
			"stock column: stock's second template edit of the same Deployments (their third revision, as the watched edit's); the patched figure includes the 1 s batch window"),
		compare("P5 requests per new revision, watched ConfigMap edit", "requests", col("stock", "p5-requests-source"), col("patched", "p5-requests-source"), target{},
			"all clients but the bench's own; stock column: stock's second template edit (the cost table below says which request is whose)"),
		compare("P5 requests per new revision of kube-controller-manager's clients, Events aside", "requests", col("stock", "p5-kcm-requests-source"), col("patched", "p5-kcm-requests-source"), atMostRatio(1.3),
			"the same without kube-apiserver's requests to itself (the admission plugin's reads on its loopback client) and without Events; target: within 1.3x, the owner patch being the one request a revision must add"),
		compare("P5 kube-apiserver CPU per new revision, watched ConfigMap edit", "ms", col("stock", "p5-apiserver-cpu-source"), col("patched", "p5-apiserver-cpu-source"), target{},
			"process_cpu_seconds_total of kube-apiserver from before the edit to after the status writes, per revision, the revisions timed by a watch (no polling list of the bench's); stock column: stock's second template edit"),
		compare("P5 kube-controller-manager CPU per new revision, watched ConfigMap edit", "ms", col("stock", "p5-kcm-cpu-source"), col("patched", "p5-kcm-cpu-source"), target{},
			"process_cpu_seconds_total of kube-controller-manager over the same span, per revision: every controller's work, the snapshot engines' among it; stock column: stock's second template edit"),
		compare("P5 Deployment syncs per new revision, watched ConfigMap edit", "syncs", col("stock", "p5-kcm-syncs-source"), col("patched", "p5-kcm-syncs-source"), target{},
			"workqueue_adds_total of the deployment controller's queue over the same span, per revision: how often each Deployment was synced (a key added while it waits counts once); stock column: stock's second template edit"),
		compare("P5 etcd bytes written per new revision, watched ConfigMap edit", "KiB", col("stock", "p5-etcd-bytes-source"), col("patched", "p5-etcd-bytes-source"), target{},
			"etcd_debugging_mvcc_total_put_size_in_bytes over the same span, per revision: the ReplicaSets, the Deployments' status, the snapshot and its holders; stock column: stock's second template edit"),
		compare("P5 watch bytes sent per new revision, watched ConfigMap edit", "KiB", col("stock", "p5-watch-bytes-source"), col("patched", "p5-watch-bytes-source"), target{},
			"apiserver_watch_events_sizes_sum over the same span, per revision, every resource and watcher; stock column: stock's second template edit"),
		compare("P5 kube-apiserver requests per second, watched ConfigMap edit", "requests/s", col("stock", "p5-request-rate-source"), col("patched", "p5-request-rate-source"), target{},
			"all clients' requests but the bench's own, from the edit to the status writes after the last revision, over the time to the last revision: the rate kube-apiserver served (with the default rate limits, one client-side budget per controller on both sides: the snapshot writer shares the controller's); stock column: stock's second template edit"),
		compare("P5 API Priority and Fairness wait per request, watched ConfigMap edit", "ms", col("stock", "p5-apf-wait-source"), col("patched", "p5-apf-wait-source"), target{},
			"apiserver_flowcontrol_request_wait_duration_seconds of priority level workload-high (kube-controller-manager's and the snapshot writer's flow schemas) over the same span, mean per request: how long kube-apiserver queued them; stock column: stock's second template edit"),
		compare("P5 kube-apiserver RSS after the edit", "MiB", col("stock", "p5-apiserver-rss-source"), col("patched", "p5-apiserver-rss-source"), target{},
			"process_resident_memory_bytes of kube-apiserver at the reading after the revisions (a level: P1 to P3 ran in the same cluster before it); stock column: after stock's second template edit"),
	}
}

// workloadPriorityLevel is the API Priority and Fairness level of kube-controller-manager's
// requests: the bootstrap flow schemas kube-controller-manager and kube-system-service-accounts
// (the controllers' service accounts and the snapshot writer's) both lead to it.
const workloadPriorityLevel = "workload-high"

// controlPlane records the control plane's cost of one P5 edit per revision (cs, from per, for
// n revisions, the last of them took after the edit) and kube-apiserver's memory at the reading
// after it, under keys that end in edit.
func controlPlane(f map[string]float64, edit string, cs, after costs, n int, took time.Duration) {
	var watched float64
	for k, v := range cs {
		if strings.HasPrefix(k, "watch bytes ") {
			watched += v
		}
	}
	f["p5-apiserver-cpu-"+edit] = cs["cpu kube-apiserver"] * 1000
	f["p5-kcm-cpu-"+edit] = cs["cpu kube-controller-manager"] * 1000
	f["p5-kcm-syncs-"+edit] = cs["syncs deployment"]
	f["p5-etcd-bytes-"+edit] = cs["etcd put bytes"] / 1024
	f["p5-watch-bytes-"+edit] = watched / 1024
	f["p5-apiserver-rss-"+edit] = after["rss kube-apiserver"] / (1 << 20)
	f["p5-request-rate-"+edit] = cs.total() * float64(n) / took.Seconds()
	if waited := cs["apf waited "+workloadPriorityLevel]; waited > 0 {
		f["p5-apf-wait-"+edit] = 1000 * cs["apf wait "+workloadPriorityLevel] / waited
	}
}

// controllerManagerRequests returns the requests of a cost reading (per revision) that kube-controller-manager's
// clients made, Events aside: all of them but kube-apiserver's requests to itself.
func (cs costs) controllerManagerRequests() float64 {
	var n float64
	for k, v := range cs {
		switch {
		case strings.HasPrefix(k, "request POST events "), strings.HasPrefix(k, "request PATCH events "):
		case strings.HasPrefix(k, "request "):
			n += v
		case strings.HasPrefix(k, "loopback "):
			n -= v
		}
	}
	return n
}

// total returns all the requests of a cost reading.
func (cs costs) total() float64 {
	var n float64
	for k, v := range cs {
		if strings.HasPrefix(k, "request ") {
			n += v
		}
	}
	return n
}

// writeFanOut prints P5 alone (BENCH_SCALE=fanout) and writes it as fanout.{json,md}; col
// returns a figure of a mode's runs, pair by pair.
func writeFanOut(col func(mode, key string) []float64, calls string, st *stamp) error {
	results := append(fanOutResults(col),
		compare("P5 snapshot API calls per new revision, template edit", "requests", zeros(col("patched", "p1-per-revision")), col("patched", "p1-per-revision"), atMost(snapshotCallsPerRevision()),
			"snapshot and holder creates + owner patches / revisions; target: a holder patch each, and a holder create and a link for each further snapshotutil.MaxHolderOwners revisions of the content"),
		compare("P5 kube-controller-manager peak RSS", "MiB", col("stock", "p5-peak-rss"), col("patched", "p5-peak-rss"), target{},
			"VmHWM after the fan-out: the peak of its resident memory since it started"),
	)
	return writeResults("fanout", results, calls, st)
}
