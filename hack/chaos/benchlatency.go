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
	"hash/fnv"
	"math"
	"sort"
	"strings"
	"sync"
	"time"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	snapshotutil "k8s.io/component-helpers/apps/configsnapshot"
	"k8s.io/utils/ptr"
)

var (
	benchLatency = flag.Int("bench-latency", 30, "with -bench: workloads of each kind whose latency (edit → new revision) is measured")
	benchSpacing = flag.Duration("bench-spacing", 500*time.Millisecond, "with -bench: time between two edits of the latency scenario (open loop)")
	// benchImageRounds gives each pair's p50 and p90 of the image edits more samples than
	// workloads: a p90 of 20 samples is the second slowest, which moves a lot from pair to pair.
	benchImageRounds = flag.Int("bench-image-rounds", 1, "with -bench: rounds of image edits of the latency scenario (one edit per workload and round, each to an image of its own)")
	// benchLatencyPairs times the image edits in pairs of their own, each half a minute long, so
	// that stock's and the patched controller manager's edits are timed within a minute of each
	// other instead of the two minutes of the other scenarios between them: a slow spell of the
	// machine then falls on both sides of a pair rather than on one.
	benchLatencyPairs = flag.Int("bench-latency-pairs", 0, "with -bench: stock/patched pairs of P3's image edits alone, after the other scenarios' pairs (0: P3's image edits in those pairs)")
	// benchPatchedMinInterval, when set, is the patched controller manager's minimum interval
	// in every scenario but P3's interval-0 run (which has its own).
	benchPatchedMinInterval = flag.String("bench-patched-min-interval", "", "with -bench: the patched kube-controller-manager's --workload-config-snapshot-min-interval (BENCH_MIN_INTERVAL), e.g. 0 for no batch window; default: the controller manager's")
	// benchMinInterval is the minimum interval of the controller manager being measured.
	benchMinInterval = new(time.Duration)
)

var benchKinds = []string{"Deployment", "DaemonSet", "StatefulSet"}

// revisionWatch records when a new revision (ReplicaSet, ControllerRevision) of each workload
// of a namespace appears, as its owner's "Kind/name".
type revisionWatch struct {
	mu   sync.Mutex
	seen map[string][]time.Time
}

func watchRevisions(ctx context.Context, c kubernetes.Interface, ns string) (*revisionWatch, error) {
	rw := &revisionWatch{seen: map[string][]time.Time{}}
	rs, err := c.AppsV1().ReplicaSets(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	crs, err := c.AppsV1().ControllerRevisions(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		rs.Stop()
		return nil, err
	}
	for _, w := range []watch.Interface{rs, crs} {
		go func() {
			defer w.Stop()
			for ev := range w.ResultChan() {
				if ev.Type != watch.Added {
					continue
				}
				obj, ok := ev.Object.(metav1.Object)
				if !ok {
					continue
				}
				now := time.Now()
				if ref := metav1.GetControllerOf(obj); ref != nil {
					rw.mu.Lock()
					rw.seen[ref.Kind+"/"+ref.Name] = append(rw.seen[ref.Kind+"/"+ref.Name], now)
					rw.mu.Unlock()
				}
			}
		}()
	}
	return rw, nil
}

// after returns when the first revision of owner seen after t appeared.
func (rw *revisionWatch) after(owner string, t time.Time) (time.Time, bool) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	for _, s := range rw.seen[owner] {
		if s.After(t) {
			return s, true
		}
	}
	return time.Time{}, false
}

// latencies makes one edit per workload of ws, one every -bench-spacing, and returns per kind how
// long each took to get its new revision.
func (rw *revisionWatch) latencies(ctx context.Context, ws []workload, edit func(w workload) error) (map[string][]float64, error) {
	started := make([]time.Time, len(ws))
	for i, w := range ws {
		started[i] = time.Now()
		if err := edit(w); err != nil {
			return nil, err
		}
		time.Sleep(*benchSpacing)
	}
	return rw.collect(ctx, ws, started)
}

// collect waits until each workload of ws has a revision made after started[i], and returns per
// kind how long each took.
func (rw *revisionWatch) collect(ctx context.Context, ws []workload, started []time.Time) (map[string][]float64, error) {
	out := map[string][]float64{}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 3*time.Minute, true, func(context.Context) (bool, error) {
		out = map[string][]float64{}
		for i, w := range ws {
			at, ok := rw.after(w.kind+"/"+w.name, started[i])
			if !ok {
				return false, nil
			}
			out[w.kind] = append(out[w.kind], at.Sub(started[i]).Seconds())
		}
		return true, nil
	})
	return out, err
}

// latencyScenario (P3) measures, for -bench-latency workloads of each kind that snapshot and watch
// a ConfigMap of their own, the time from an image edit to the new revision (imageRounds edits
// of each), and (with source)
// from an edit of the ConfigMap to the new revision, into out.latency (keys "image/<Kind>",
// "source/<Kind>"), and when withCosts, what each edit costs into out.path (the control plane's
// counters read around each edit, 2 s after it for the status writes to finish).
func latencyScenario(ctx context.Context, c kubernetes.Interface, ns string, imageRounds int, source, withCosts bool, out *benchRun) error {
	ws, rw, err := latencyWorkloads(ctx, c, ns)
	if err != nil {
		return err
	}
	out.latency = map[string][]float64{}
	// Round r of the image edits sets pause:3.<11-r> (3.10, 3.9, ...): a new template each time,
	// never one the workload had (the workloads start with 3.10.1), so that each edit makes a
	// new revision rather than bring an old one back.
	edits := []struct {
		key    string
		rounds int
		edit   func(w workload, round int) error
	}{
		{"image", imageRounds, func(w workload, round int) error {
			return setImage(ctx, c, ns, w, fmt.Sprintf("registry.k8s.io/pause:3.%d", 11-round))
		}},
		{"source", 1, func(w workload, _ int) error { return setConfig(ctx, c, ns, w.source, "v2") }},
	}
	if !source {
		edits = edits[:1]
	}
	for i, e := range edits {
		if i > 0 {
			// Past the minimum interval since the revisions just made: a watch-triggered
			// revision right after another one waits for it on purpose (storm protection).
			time.Sleep(*benchMinInterval + time.Second)
		}
		edit := func() error {
			for round := 1; round <= e.rounds; round++ {
				l, err := rw.latencies(ctx, ws, func(w workload) error { return e.edit(w, round) })
				if err != nil {
					return fmt.Errorf("%s edits, round %d: %w", e.key, round, err)
				}
				for kind, v := range l {
					out.latency[e.key+"/"+kind] = append(out.latency[e.key+"/"+kind], v...)
				}
			}
			return nil
		}
		if !withCosts {
			if err := edit(); err != nil {
				return err
			}
			continue
		}
		if out.path[i], err = editCosts(ctx, c, len(ws)*e.rounds, edit); err != nil {
			return err
		}
	}
	return nil
}

// editCosts runs edit, n edits, and returns what each cost the control plane behind c (readCosts,
// but watches): read before, and 2 s after it, once the controllers have finished the status
// updates of the new revisions.
func editCosts(ctx context.Context, c kubernetes.Interface, n int, edit func() error) (costs, error) {
	before, err := readCosts(ctx, c)
	if err != nil {
		return nil, err
	}
	if err := edit(); err != nil {
		return nil, err
	}
	time.Sleep(2 * time.Second)
	after, err := readCosts(ctx, c)
	if err != nil {
		return nil, err
	}
	return per(before, after, n, func(k string) bool { return strings.HasPrefix(k, "request WATCH ") }), nil
}

// latencyWorkloads creates -bench-latency workloads of each kind without pods, each snapshotting
// and watching a ConfigMap of its own, and returns them with a watch of their revisions once every
// one has its first revision and the controllers are past their first syncs.
func latencyWorkloads(ctx context.Context, c kubernetes.Interface, ns string) ([]workload, *revisionWatch, error) {
	var ws []workload
	for _, kind := range benchKinds {
		for i := 0; i < *benchLatency; i++ {
			w := workload{kind, fmt.Sprintf("lat-%s-%d", strings.ToLower(kind), i), fmt.Sprintf("lat-%s-%d", strings.ToLower(kind), i)}
			if err := createConfig(ctx, c, ns, w.source, "v1"); err != nil {
				return nil, nil, err
			}
			// No replicas (a DaemonSet has one pod per node): the figure is the controller's
			// time to the new revision, not the rollout of pods.
			if err := createWith(ctx, c, ns, w, 0); err != nil {
				return nil, nil, err
			}
			ws = append(ws, w)
		}
	}
	rw, err := watchRevisions(ctx, c, ns)
	if err != nil {
		return nil, nil, err
	}
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 3*time.Minute, true, func(context.Context) (bool, error) {
		for _, w := range ws {
			if _, ok := rw.after(w.kind+"/"+w.name, time.Time{}); !ok {
				return false, nil
			}
		}
		return true, nil
	}); err != nil {
		return nil, nil, fmt.Errorf("first revisions: %w", err)
	}
	// Past the first syncs (status updates of the new workloads) before anything is timed.
	time.Sleep(3 * time.Second)
	return ws, rw, nil
}

// latencySide is one controller manager's half of P3's image edits side by side (-bench-twin):
// its kube-apiserver, namespace, workloads and their revisions.
type latencySide struct {
	c  kubernetes.Interface
	ns string
	ws []workload
	rw *revisionWatch
}

// newLatencySide makes P3's workloads in namespace ns once the controller manager behind c works
// (a Deployment gets its ReplicaSet).
func newLatencySide(ctx context.Context, c kubernetes.Interface, ns string) (*latencySide, error) {
	if err := newBenchNamespace(ctx, c, ns); err != nil {
		return nil, err
	}
	ws, rw, err := latencyWorkloads(ctx, c, ns)
	if err != nil {
		return nil, err
	}
	return &latencySide{c: c, ns: ns, ws: ws, rw: rw}, nil
}

// interleavedLatencies makes rounds image edits of each workload on every side (see
// interleavedRound) and returns per side the samples by "image/<Kind>".
func interleavedLatencies(ctx context.Context, sides []*latencySide, rounds, pair int) ([]map[string][]float64, error) {
	out := make([]map[string][]float64, len(sides))
	for s := range sides {
		out[s] = map[string][]float64{}
	}
	all := make([]int, len(sides[0].ws))
	for i := range all {
		all[i] = i
	}
	for round := 1; round <= rounds; round++ {
		image := fmt.Sprintf("registry.k8s.io/pause:3.%d", 11-round)
		l, err := interleavedRound(ctx, sides, all, pair, func(s int, w workload) error {
			return setImage(ctx, sides[s].c, sides[s].ns, w, image)
		})
		if err != nil {
			return nil, fmt.Errorf("image edits, round %d: %w", round, err)
		}
		for s := range sides {
			for kind, v := range l[s] {
				out[s]["image/"+kind] = append(out[s]["image/"+kind], v...)
			}
		}
	}
	return out, nil
}

// interleavedRound makes edit(s, w) of the workloads of every side s whose indices are given,
// one workload every -bench-spacing, the sides' edits of one workload -bench-spacing/2 apart
// in an order that alternates from workload to workload (and from pair to pair), and returns
// per side how long each took to get its new revision, by kind.
func interleavedRound(ctx context.Context, sides []*latencySide, indices []int, pair int, edit func(s int, w workload) error) ([]map[string][]float64, error) {
	started := make([][]time.Time, len(sides))
	for n, i := range indices {
		for _, s := range alternate(n+pair, []int{0, 1}) {
			started[s] = append(started[s], time.Now())
			if err := edit(s, sides[s].ws[i]); err != nil {
				return nil, err
			}
			time.Sleep(*benchSpacing / 2)
		}
	}
	out := make([]map[string][]float64, len(sides))
	for s, side := range sides {
		ws := make([]workload, len(indices))
		for n, i := range indices {
			ws[n] = side.ws[i]
		}
		var err error
		if out[s], err = side.rw.collect(ctx, ws, started[s]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func setImage(ctx context.Context, c kubernetes.Interface, ns string, w workload, image string) error {
	patch := []byte(fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":"pause","image":%q}]}}}}`, image))
	var err error
	switch w.kind {
	case "Deployment":
		_, err = c.AppsV1().Deployments(ns).Patch(ctx, w.name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	case "DaemonSet":
		_, err = c.AppsV1().DaemonSets(ns).Patch(ctx, w.name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	case "StatefulSet":
		_, err = c.AppsV1().StatefulSets(ns).Patch(ctx, w.name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	}
	return err
}

// percentile returns the q-quantile (0 < q <= 1) of values by the nearest-rank method.
func percentile(values []float64, q float64) float64 {
	if len(values) == 0 {
		return 0
	}
	v := append([]float64(nil), values...)
	sort.Float64s(v)
	return v[int(math.Ceil(q*float64(len(v))))-1]
}

// storageScenario measures what one Deployment's config keeps in the API after -edits changes of
// its 12 KiB ConfigMap, each rolled out with an image edit in the same revision: the objects and
// their bytes (protobuf, as etcd stores them, metadata included). Patched: the source and the
// snapshots that remain once the history limit (default 10) has removed old ReplicaSets and the
// garbage collector their snapshots. Stock: the same history kept as kustomize keeps it, a
// hash-named copy per content that the Deployment names, which nothing deletes.
func storageScenario(ctx context.Context, c kubernetes.Interface, ns string, edits int, patched bool) (objects int, bytes float64, err error) {
	const name = "storage"
	value := func(i int) string { return fmt.Sprintf("%s%d", strings.Repeat("x", 12*1024), i) }
	// config returns the ConfigMap that holds change i: the source (patched) or a copy.
	config := func(i int) string {
		if patched {
			return name
		}
		return fmt.Sprintf("%s-%08x", name, fnv32(value(i)))
	}
	if err := createConfig(ctx, c, ns, config(0), value(0)); err != nil {
		return 0, 0, err
	}
	labels := map[string]string{"app": name}
	if _, err := c.AppsV1().Deployments(ns).Create(ctx, &apps.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: apps.DeploymentSpec{
		Replicas: ptr.To[int32](0), Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: v1.PodSpec{
			Containers: []v1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10"}},
			Volumes: []v1.Volume{{Name: "config", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{
				LocalObjectReference: v1.LocalObjectReference{Name: config(0)}, Snapshot: ptr.To(patched)}}}}}},
	}}, metav1.CreateOptions{}); err != nil {
		return 0, 0, err
	}
	if err := waitRevision(ctx, c, ns, []string{name}, 1); err != nil {
		return 0, 0, err
	}
	for i := 1; i <= edits; i++ {
		if patched {
			err = setConfig(ctx, c, ns, name, value(i))
		} else {
			err = createConfig(ctx, c, ns, config(i), value(i))
		}
		if err != nil {
			return 0, 0, err
		}
		patch := fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":"pause","image":"registry.k8s.io/pause:3.%d"}],"volumes":[{"name":"config","configMap":{"name":%q}}]}}}}`, i, config(i))
		if _, err := c.AppsV1().Deployments(ns).Patch(ctx, name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			return 0, 0, err
		}
		// Both edits in one revision: wait for it before the next pair.
		if err := waitRevision(ctx, c, ns, []string{name}, i+1); err != nil {
			return 0, 0, err
		}
	}
	// The history limit and the garbage collector have done their work when the count is
	// stable.
	last := -1
	err = wait.PollUntilContextTimeout(ctx, 2*time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := c.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		objects, bytes = 0, 0
		for _, cm := range list.Items {
			if cm.Name == name || strings.HasPrefix(cm.Name, name+"-") || cm.Annotations[snapshotutil.SourceAnnotation] == name {
				objects++
				bytes += float64(cm.Size())
			}
		}
		stable := objects == last
		last = objects
		return stable, nil
	})
	return objects, bytes, err
}

// fnv32 is the hash of a copy's name, as kustomize's configMapGenerator names its copies.
func fnv32(s string) uint32 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(s))
	return h.Sum32()
}
