package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	snapshotutil "k8s.io/component-helpers/apps/configsnapshot"
)

// P7 (BENCH_SCALE=mix): N workloads, a third of each kind, without pods, share one watched
// ConfigMap. Stock and patched: a template edit of every one, then (patched) one edit of the
// ConfigMap: the time until every workload has its new revision, exactly one each, and the
// snapshots' owners.

// runMixBench runs P7 on stock, then on the patched controller manager, in a namespace each.
func runMixBench(ctx context.Context, c kubernetes.Interface) error {
	start := time.Now()
	f := map[string]map[string]float64{}
	for _, mode := range []struct {
		name  string
		dir   string
		gated bool
	}{{"stock", *stockBin, false}, {"patched", *patchedBin, true}} {
		step(fmt.Sprintf("bench: P7 %d workloads of the three kinds on one ConfigMap, %s", *benchFanOut, mode.name))
		if err := swap("kube-controller-manager", mode.dir, mode.gated); err != nil {
			return err
		}
		figures, err := mixScenario(ctx, c, "bench-mix-"+mode.name, mode.gated)
		deleteNamespace(c, "bench-mix-"+mode.name)
		if err != nil {
			return fmt.Errorf("%s: %w", mode.name, err)
		}
		f[mode.name] = figures
	}
	s, p := f["stock"], f["patched"]
	results := []benchResult{
		compare("P7 template edit of N workloads of the three kinds", "seconds", []float64{s["template"]}, []float64{p["template"]}, atMostRatio(1.1),
			fmt.Sprintf("N = %d (%d of each kind, no pods) that snapshot and watch one ConfigMap (stock ignores the fields); edit → every workload has its new revision, exactly one each", *benchFanOut, *benchFanOut/3)),
		compare("P7 one watched ConfigMap edit, N workloads of the three kinds", "seconds", []float64{s["template"]}, []float64{p["source"]}, atMostRatio(1.2),
			fmt.Sprintf("stock column: stock template edits; exactly one new revision each; includes the 1 s batch window; most owners of one snapshot: %.0f", p["max-owners"])),
		compare("P7 kube-controller-manager peak RSS", "MiB", []float64{s["peak-rss"]}, []float64{p["peak-rss"]}, target{}, "VmHWM after P7"),
	}
	st := newStamp()
	st.Pairs, st.Took = 1, time.Since(start).Round(time.Second).String()
	return writeResults("mix", results, "", st)
}

// mixScenario creates the workloads in ns, edits their templates, then (patched) their ConfigMap,
// and returns the times.
func mixScenario(ctx context.Context, c kubernetes.Interface, ns string, patched bool) (map[string]float64, error) {
	f := map[string]float64{}
	if _, err := c.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	if err := createConfig(ctx, c, ns, "mix", "v1"); err != nil {
		return nil, err
	}
	ws := make([]workload, *benchFanOut)
	err := parallel(len(ws), func(i int) error {
		kind := benchKinds[i%len(benchKinds)]
		ws[i] = workload{kind, fmt.Sprintf("mix-%s-%d", strings.ToLower(kind), i), "mix"}
		return createWith(ctx, c, ns, ws[i], 0)
	})
	if err != nil {
		return nil, err
	}
	if err := waitKindRevisions(ctx, c, ns, ws, 1); err != nil {
		return nil, fmt.Errorf("first revisions: %w", err)
	}
	t0 := time.Now()
	err = parallel(len(ws), func(i int) error { return setImage(ctx, c, ns, ws[i], "registry.k8s.io/pause:3.10") })
	if err != nil {
		return nil, err
	}
	if err := waitKindRevisions(ctx, c, ns, ws, 2); err != nil {
		return nil, fmt.Errorf("template edits: %w", err)
	}
	f["template"] = time.Since(t0).Seconds()
	if patched {
		// Past the minimum interval since the revisions just made.
		time.Sleep(11 * time.Second)
		t0 = time.Now()
		if err := setConfig(ctx, c, ns, "mix", "v2"); err != nil {
			return nil, err
		}
		if err := waitKindRevisions(ctx, c, ns, ws, 3); err != nil {
			return nil, fmt.Errorf("watched edit: %w", err)
		}
		f["source"] = time.Since(t0).Seconds()
		// A moment more: a second revision of any workload would show now.
		time.Sleep(*benchSettle)
		if err := waitKindRevisions(ctx, c, ns, ws, 3); err != nil {
			return nil, err
		}
		list, err := c.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{LabelSelector: snapshotutil.SnapshotLabel + "=true"})
		if err != nil {
			return nil, err
		}
		for _, cm := range list.Items {
			f["max-owners"] = max(f["max-owners"], float64(len(cm.OwnerReferences)))
		}
	}
	f["peak-rss"], err = kcmPeakRSS()
	return f, err
}

// waitKindRevisions waits until every workload of ws has exactly n revisions (ReplicaSets or
// ControllerRevisions it controls), and fails when one has more.
func waitKindRevisions(ctx context.Context, c kubernetes.Interface, ns string, ws []workload, n int) error {
	var extra error
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, waitTimeout(len(ws)), true, func(ctx context.Context) (bool, error) {
		counts := map[string]int{}
		rss, err := c.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		for _, rs := range rss.Items {
			if o := metav1.GetControllerOf(&rs); o != nil {
				counts[o.Kind+"/"+o.Name]++
			}
		}
		crs, err := c.AppsV1().ControllerRevisions(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		for _, cr := range crs.Items {
			if o := metav1.GetControllerOf(&cr); o != nil {
				counts[o.Kind+"/"+o.Name]++
			}
		}
		done := true
		for _, w := range ws {
			switch got := counts[w.kind+"/"+w.name]; {
			case got > n:
				extra = fmt.Errorf("%s %s has %d revisions, want %d", w.kind, w.name, got, n)
				return false, extra
			case got < n:
				done = false
			}
		}
		return done, nil
	})
	if extra != nil {
		return extra
	}
	return err
}
