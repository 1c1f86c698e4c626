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

// runMixBench runs P7 in -bench-pairs stock/patched pairs of alternating order, each run in a
// namespace of its own.
func runMixBench(ctx context.Context, c kubernetes.Interface) error {
	start := time.Now()
	st := newStamp()
	setFlag("kube-controller-manager", "--leader-elect=", "false")
	runs := map[string][]map[string]float64{}
	var calls [4]costs
	for pair := 0; pair < *benchPairs; pair++ {
		type mode struct {
			name  string
			dir   string
			gated bool
		}
		for _, mode := range alternate(pair, []mode{{"stock", *stockBin, false}, {"patched", *patchedBin, true}}) {
			step(fmt.Sprintf("bench: P7 pair %d of %d, %d workloads of the three kinds on one ConfigMap, %s", pair+1, *benchPairs, *benchFanOut, mode.name))
			if err := swap("kube-controller-manager", mode.dir, mode.gated); err != nil {
				return err
			}
			st.recordFlags(mode.name)
			ns := fmt.Sprintf("bench-mix-%s-%d", mode.name, pair+1)
			figures, cs, err := mixScenario(ctx, c, ns, mode.gated)
			emptyNamespace(c, ns)
			if err != nil {
				return fmt.Errorf("%s, pair %d: %w", mode.name, pair+1, err)
			}
			runs[mode.name] = append(runs[mode.name], figures)
			if pair == 0 && mode.gated {
				calls[1], calls[3] = cs[0], cs[1]
			} else if pair == 0 {
				calls[0], calls[2] = cs[0], cs[1]
			}
		}
	}
	col := func(mode, key string) []float64 {
		var out []float64
		for _, f := range runs[mode] {
			out = append(out, f[key])
		}
		return out
	}
	results := []benchResult{
		compare("P7 template edit of N workloads of the three kinds", "seconds", col("stock", "template"), col("patched", "template"), atMostRatio(1.1),
			fmt.Sprintf("N = %d (%d of each kind, no pods) that snapshot and watch one ConfigMap (stock ignores the fields); edit → every workload has its new revision, exactly one each", *benchFanOut, *benchFanOut/3)),
		compare("P7 one watched ConfigMap edit, N workloads of the three kinds", "seconds", col("stock", "source"), col("patched", "source"), atMostRatio(1.2),
			fmt.Sprintf("stock column: stock's second template edit of the same workloads (their third revision, as the watched edit's); exactly one new revision each; the patched figure includes the 1 s batch window; most owners of one snapshot: %.0f", spreadOf(col("patched", "max-owners")).Max)),
		compare("P7 kube-controller-manager peak RSS", "MiB", col("stock", "peak-rss"), col("patched", "peak-rss"), target{}, "VmHWM after P7"),
	}
	st.Took = time.Since(start).Round(time.Second).String()
	return writeResults("mix", results, costTable(fmt.Sprintf("P7 cost per new revision (N = %d, first pair), all clients but the bench's own workload patches, lists and watches:", *benchFanOut),
		[]string{"stock template edit", "patched template edit", "stock second template edit", "patched watched ConfigMap edit"}, calls[:]), st)
}

// mixScenario creates the workloads in ns, edits their templates, then their ConfigMap (patched)
// or their templates again (stock: the same third revision), and returns the times and what each
// edit cost per revision.
func mixScenario(ctx context.Context, c kubernetes.Interface, ns string, patched bool) (map[string]float64, [2]costs, error) {
	f := map[string]float64{}
	var cs [2]costs
	if _, err := c.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return nil, cs, err
	}
	if err := createConfig(ctx, c, ns, "mix", "v1"); err != nil {
		return nil, cs, err
	}
	ws := make([]workload, *benchFanOut)
	err := parallel(len(ws), func(i int) error {
		kind := benchKinds[i%len(benchKinds)]
		ws[i] = workload{kind, fmt.Sprintf("mix-%s-%d", strings.ToLower(kind), i), "mix"}
		return createWith(ctx, c, ns, ws[i], 0)
	})
	if err != nil {
		return nil, cs, err
	}
	if err := waitKindRevisions(ctx, c, ns, ws, 1); err != nil {
		return nil, cs, fmt.Errorf("first revisions: %w", err)
	}
	before, err := readCosts(ctx, c)
	if err != nil {
		return nil, cs, err
	}
	t0 := time.Now()
	err = parallel(len(ws), func(i int) error { return setImage(ctx, c, ns, ws[i], "registry.k8s.io/pause:3.10") })
	if err != nil {
		return nil, cs, err
	}
	if err := waitKindRevisions(ctx, c, ns, ws, 2); err != nil {
		return nil, cs, fmt.Errorf("template edits: %w", err)
	}
	f["template"] = time.Since(t0).Seconds()
	// Past the minimum interval since the revisions just made, and the status updates after them.
	time.Sleep(11 * time.Second)
	after, err := readCosts(ctx, c)
	if err != nil {
		return nil, cs, err
	}
	cs[0] = per(before, after, len(ws), benchOwn)
	before = after
	t0 = time.Now()
	if patched {
		err = setConfig(ctx, c, ns, "mix", "v2")
	} else {
		err = parallel(len(ws), func(i int) error { return setImage(ctx, c, ns, ws[i], "registry.k8s.io/pause:3.9") })
	}
	if err != nil {
		return nil, cs, err
	}
	if err := waitKindRevisions(ctx, c, ns, ws, 3); err != nil {
		return nil, cs, fmt.Errorf("second edit: %w", err)
	}
	f["source"] = time.Since(t0).Seconds()
	// A moment more: a second revision of any workload would show now.
	time.Sleep(*benchSettle)
	if err := waitKindRevisions(ctx, c, ns, ws, 3); err != nil {
		return nil, cs, err
	}
	if after, err = readCosts(ctx, c); err != nil {
		return nil, cs, err
	}
	cs[1] = per(before, after, len(ws), benchOwn)
	if patched {
		list, err := c.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{LabelSelector: snapshotutil.SnapshotLabel + "=true"})
		if err != nil {
			return nil, cs, err
		}
		for _, cm := range list.Items {
			f["max-owners"] = max(f["max-owners"], float64(len(cm.OwnerReferences)))
		}
	}
	f["peak-rss"], err = kcmPeakRSS()
	return f, cs, err
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
