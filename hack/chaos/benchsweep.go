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
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// The size and scale sweep (BENCH_SCALE=sweep): what one change of a source costs the control
// plane as the source grows and as more Deployments share it, for ConfigMaps and Secrets, next
// to what the same change costs a stock user, who makes a hash-named copy and edits every
// Deployment to mount it. Each cell is one change on one controller manager: the figures say
// how cost grows (log-log slopes), not a ratio with an interval.
var (
	sweepSizes   = flag.String("bench-sweep-sizes", "1,64,1000", "with -bench-scenarios sweep: source sizes in KiB (a ConfigMap's or Secret's data is at most 1 MiB)")
	sweepSharers = flag.String("bench-sweep-sharers", "100,500,2000", "with -bench-scenarios sweep: Deployments that share a source")
)

// sweepCell is what one change of a source cost, from the change until every Deployment that
// shares it has its new revision and the control plane is idle again (old revisions and the
// copies they alone used deleted).
type sweepCell struct {
	Kind    string `json:"kind"`
	SizeKiB int    `json:"sizeKiB"`
	Sharers int    `json:"sharers"`
	Side    string `json:"side"`
	// FirstSeconds and LastSeconds are the time from the change to the first and the last new
	// revision, as a watch of the Deployments sees them.
	FirstSeconds float64 `json:"firstSeconds"`
	LastSeconds  float64 `json:"lastSeconds"`
	// EtcdPuts and EtcdKiB are etcd's writes and the bytes they wrote; WatchKiB the bytes of
	// ConfigMap and Secret watch events that kube-apiserver sent to every watcher.
	EtcdPuts float64 `json:"etcdPuts"`
	EtcdKiB  float64 `json:"etcdKiB"`
	WatchKiB float64 `json:"watchKiB"`
	// APIServerCPU is kube-apiserver's CPU time in seconds; the memory figures (MiB) are read
	// once the control plane is idle.
	APIServerCPU float64 `json:"apiserverCPUSeconds"`
	APIServerRSS float64 `json:"apiserverRSSMiB"`
	KCMRSS       float64 `json:"kubeControllerManagerRSSMiB"`
	EtcdDBMiB    float64 `json:"etcdDBMiB"`
}

// runSweepBench runs every cell on stock, then on the patched controller manager, each sharer
// count in a namespace of its own whose Deployments go through every source in turn.
func runSweepBench(ctx context.Context, c kubernetes.Interface) error {
	start := time.Now()
	st := newStamp()
	st.Pairs = 1
	// The patched controller manager's default minimum interval, which each change waits out.
	*benchMinInterval = 10 * time.Second
	setFlag("kube-controller-manager", "--leader-elect=", "false")
	if *benchUnlimited {
		setFlag("kube-controller-manager", "--kube-api-qps=", unlimitedQPS)
		setFlag("kube-controller-manager", "--kube-api-burst=", unlimitedQPS)
	}
	sizes, sharers := ints(*sweepSizes), ints(*sweepSharers)
	var cells []sweepCell
	for _, side := range []struct {
		name  string
		dir   string
		gated bool
	}{{"stock", *stockBin, false}, {"patched", *patchedBin, true}} {
		if err := swap("kube-controller-manager", side.dir, side.gated); err != nil {
			return err
		}
		st.recordFlags(side.name)
		for _, n := range sharers {
			ns := fmt.Sprintf("sweep-%s-%d", side.name, n)
			got, err := sweepNamespace(ctx, c, ns, side.name, n, sizes)
			emptyNamespace(c, ns)
			if err != nil {
				return fmt.Errorf("%s, %d sharers: %w", side.name, n, err)
			}
			cells = append(cells, got...)
		}
	}
	st.Took = time.Since(start).Round(time.Second).String()
	return writeSweep(cells, sizes, sharers, st)
}

// sweepNamespace creates n Deployments and a source of each kind and size in ns, then, for each
// source, points the Deployments at it (not measured) and changes it (measured).
func sweepNamespace(ctx context.Context, c kubernetes.Interface, ns, side string, n int, sizes []int) ([]sweepCell, error) {
	step(fmt.Sprintf("bench: sweep, %s, %d Deployments", side, n))
	if _, err := c.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	for _, kind := range []string{"ConfigMap", "Secret"} {
		for _, size := range sizes {
			if err := writeSource(ctx, c, ns, kind, sourceName(kind, size), sweepValue(size, 'a'), true); err != nil {
				return nil, err
			}
		}
	}
	names := make([]string, n)
	if err := parallel(n, func(i int) error {
		names[i] = fmt.Sprintf("share-%d", i)
		return createSweepDeployment(ctx, c, ns, names[i])
	}); err != nil {
		return nil, err
	}
	revision := 1
	if _, _, err := timeRevisions(ctx, c, ns, names, revision, func() error { return nil }); err != nil {
		return nil, err
	}
	var cells []sweepCell
	for _, kind := range []string{"ConfigMap", "Secret"} {
		for _, size := range sizes {
			step(fmt.Sprintf("bench:   %s of %d KiB, %d sharers, %s", kind, size, n, side))
			name := sourceName(kind, size)
			// Every Deployment mounts the source (the patched side with snapshot and watch).
			revision++
			if _, _, err := timeRevisions(ctx, c, ns, names, revision, func() error {
				return mountAll(ctx, c, ns, names, kind, name, side == "patched")
			}); err != nil {
				return nil, err
			}
			if err := settle(ctx, c, ns, names); err != nil {
				return nil, err
			}
			if side == "patched" {
				// Past the minimum interval since the revisions just made: the change waits
				// for its batch window only.
				time.Sleep(*benchMinInterval + time.Second)
			}
			// The change: the patched side edits the source; the stock side makes a copy with
			// the new content and mounts it in every Deployment, as kustomize users do.
			change := func() error { return writeSource(ctx, c, ns, kind, name, sweepValue(size, 'b'), false) }
			if side == "stock" {
				change = func() error {
					copyName := name + "-b"
					if err := writeSource(ctx, c, ns, kind, copyName, sweepValue(size, 'b'), true); err != nil {
						return err
					}
					return mountAll(ctx, c, ns, names, kind, copyName, false)
				}
			}
			cell, err := measureChange(ctx, c, ns, names, revision+1, change)
			if err != nil {
				return nil, err
			}
			revision++
			cell.Kind, cell.SizeKiB, cell.Sharers, cell.Side = kind, size, n, side
			cells = append(cells, cell)
		}
	}
	return cells, nil
}

// measureChange makes the change and reads what it cost once every Deployment of names is at
// revision want and the control plane is idle again.
func measureChange(ctx context.Context, c kubernetes.Interface, ns string, names []string, want int, change func() error) (sweepCell, error) {
	var cell sweepCell
	before, err := readCosts(ctx, c)
	if err != nil {
		return cell, err
	}
	first, last, err := timeRevisions(ctx, c, ns, names, want, change)
	if err != nil {
		return cell, err
	}
	if err := settle(ctx, c, ns, names); err != nil {
		return cell, err
	}
	after, err := readCosts(ctx, c)
	if err != nil {
		return cell, err
	}
	d := per(before, after, 1, nil)
	cell.FirstSeconds, cell.LastSeconds = first.Seconds(), last.Seconds()
	cell.EtcdPuts, cell.EtcdKiB = d["etcd puts"], d["etcd put bytes"]/1024
	cell.WatchKiB = (d["watch bytes configmaps"] + d["watch bytes secrets"]) / 1024
	cell.APIServerCPU = d["cpu kube-apiserver"]
	cell.APIServerRSS, cell.EtcdDBMiB = after["rss kube-apiserver"]/(1<<20), after["etcd db bytes"]/(1<<20)
	cell.KCMRSS, err = kcmRSS()
	return cell, err
}

// settle waits until the deployment controller is done with names (waitSettled) and etcd is
// back to its idle rate (leases and their like: at most quietPuts writes in three seconds): the
// garbage collector has deleted the revisions beyond the history limit and what they alone used.
func settle(ctx context.Context, c kubernetes.Interface, ns string, names []string) error {
	if err := waitSettled(ctx, c, ns, names); err != nil {
		return err
	}
	var puts []float64
	return wait.PollUntilContextTimeout(ctx, time.Second, waitTimeout(len(names)), true, func(ctx context.Context) (bool, error) {
		cs, err := readCosts(ctx, c)
		if err != nil {
			return false, err
		}
		puts = append(puts, cs["etcd puts"])
		return len(puts) > 3 && puts[len(puts)-1]-puts[len(puts)-4] <= quietPuts, nil
	})
}

// quietPuts is how many etcd writes in three seconds an idle bench cluster makes at most: the
// leases of kube-scheduler (every 2 s), kube-apiserver and the fake nodes (every 10 s).
const quietPuts = 6

// timeRevisions calls start and returns how long after it the first and the last Deployment of
// names reached revision want, as a watch of the namespace's Deployments sees them. A watch that
// kube-apiserver ends (a watcher that falls behind thousands of status updates is closed) is
// followed by a list, which counts the Deployments it missed at the list's time, and a new watch.
func timeRevisions(ctx context.Context, c kubernetes.Interface, ns string, names []string, want int, start func() error) (first, last time.Duration, err error) {
	wantNames := map[string]bool{}
	for _, name := range names {
		wantNames[name] = true
	}
	ctx, cancel := context.WithTimeout(ctx, waitTimeout(len(names)))
	defer cancel()
	var t0 time.Time
	at := map[string]bool{}
	seen := func(d *apps.Deployment) {
		if wantNames[d.Name] && !at[d.Name] && d.Annotations["deployment.kubernetes.io/revision"] == strconv.Itoa(want) {
			at[d.Name] = true
			if last = time.Since(t0); len(at) == 1 {
				first = last
			}
		}
	}
	for len(at) < len(wantNames) {
		list, err := c.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return 0, 0, err
		}
		w, err := c.AppsV1().Deployments(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
		if err != nil {
			return 0, 0, err
		}
		if t0.IsZero() {
			t0 = time.Now()
			if err := start(); err != nil {
				w.Stop()
				return 0, 0, err
			}
		}
		for i := range list.Items {
			seen(&list.Items[i])
		}
		err = consume(ctx, w, func(d *apps.Deployment) bool { seen(d); return len(at) == len(wantNames) })
		w.Stop()
		if err != nil {
			return 0, 0, fmt.Errorf("%d of %d Deployments at revision %d: %w", len(at), len(wantNames), want, err)
		}
	}
	return first, last, nil
}

// consume passes the Deployments of w's events to f until f returns true or w ends.
func consume(ctx context.Context, w watch.Interface, f func(*apps.Deployment) bool) error {
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev, ok := <-w.ResultChan():
			if !ok {
				return nil
			}
			if d, isDeployment := ev.Object.(*apps.Deployment); isDeployment && ev.Type != watch.Deleted && f(d) {
				return nil
			}
		}
	}
}

// createSweepDeployment creates a Deployment of no replica that keeps one revision besides its
// current one and mounts no source yet.
func createSweepDeployment(ctx context.Context, c kubernetes.Interface, ns, name string) error {
	labels := map[string]string{"app": name}
	_, err := c.AppsV1().Deployments(ns).Create(ctx, &apps.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: apps.DeploymentSpec{
		Replicas: ptr.To[int32](0), RevisionHistoryLimit: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: v1.PodSpec{
			Containers: []v1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}}},
	}}, metav1.CreateOptions{})
	return err
}

// mountAll has every Deployment of names mount the ConfigMap or Secret (kind) source as its only
// volume, with snapshot and watch when snapshot is set, in one merge patch each.
func mountAll(ctx context.Context, c kubernetes.Interface, ns string, names []string, kind, source string, snapshot bool) error {
	vol := map[string]interface{}{"name": "cfg"}
	ref := map[string]interface{}{}
	if snapshot {
		ref["snapshot"], ref["watch"] = true, true
	}
	if kind == "Secret" {
		ref["secretName"] = source
		vol["secret"] = ref
	} else {
		ref["name"] = source
		vol["configMap"] = ref
	}
	patch, err := json.Marshal(map[string]interface{}{"spec": map[string]interface{}{"template": map[string]interface{}{"spec": map[string]interface{}{"volumes": []interface{}{vol}}}}})
	if err != nil {
		return err
	}
	return parallel(len(names), func(i int) error {
		_, err := c.AppsV1().Deployments(ns).Patch(ctx, names[i], types.MergePatchType, patch, metav1.PatchOptions{})
		return err
	})
}

// writeSource creates (create) or updates the ConfigMap or Secret (kind) name with value under
// the key "v".
func writeSource(ctx context.Context, c kubernetes.Interface, ns, kind, name, value string, create bool) error {
	var err error
	meta := metav1.ObjectMeta{Name: name, Namespace: ns}
	switch {
	case kind == "Secret" && create:
		_, err = c.CoreV1().Secrets(ns).Create(ctx, &v1.Secret{ObjectMeta: meta, Data: map[string][]byte{"v": []byte(value)}}, metav1.CreateOptions{})
	case kind == "Secret":
		_, err = c.CoreV1().Secrets(ns).Update(ctx, &v1.Secret{ObjectMeta: meta, Data: map[string][]byte{"v": []byte(value)}}, metav1.UpdateOptions{})
	case create:
		_, err = c.CoreV1().ConfigMaps(ns).Create(ctx, &v1.ConfigMap{ObjectMeta: meta, Data: map[string]string{"v": value}}, metav1.CreateOptions{})
	default:
		_, err = c.CoreV1().ConfigMaps(ns).Update(ctx, &v1.ConfigMap{ObjectMeta: meta, Data: map[string]string{"v": value}}, metav1.UpdateOptions{})
	}
	return err
}

func sourceName(kind string, sizeKiB int) string {
	return fmt.Sprintf("%s-%dk", strings.ToLower(kind), sizeKiB)
}

// sweepValue is a source's content of sizeKiB KiB.
func sweepValue(sizeKiB int, fill byte) string { return strings.Repeat(string(fill), sizeKiB*1024) }

// ints parses a comma-separated list of integers.
func ints(list string) []int {
	var out []int
	for _, s := range strings.Split(list, ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// writeSweep prints the cells and the slopes, and writes them as sweep.{json,md}.
func writeSweep(cells []sweepCell, sizes, sharers []int, st *stamp) error {
	var md strings.Builder
	fmt.Fprintf(&md, "Run: %s.\n\n", st)
	md.WriteString("One change of a source shared by N Deployments (no replicas, one old revision kept), from the change until every one has its new revision and the control plane is idle again (the garbage collector done). Patched: the source edited, its Deployments snapshot and watch it. Stock: a copy with the new content created and every Deployment edited to mount it, as a kustomize user does. Watch bytes: ConfigMap and Secret watch events that kube-apiserver sent to all its watchers (apiserver_watch_events_sizes); memory read once idle.\n\n")
	md.WriteString("| source | N | side | first revision (s) | last revision (s) | etcd writes | etcd written (KiB) | watch sent (KiB) | kube-apiserver CPU (s) | kube-apiserver RSS (MiB) | kube-controller-manager RSS (MiB) | etcd database (MiB) |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, kind := range []string{"ConfigMap", "Secret"} {
		for _, size := range sizes {
			for _, n := range sharers {
				for _, side := range []string{"stock", "patched"} {
					if x, ok := findCell(cells, kind, size, n, side); ok {
						fmt.Fprintf(&md, "| %s %d KiB | %d | %s | %.2f | %.2f | %.0f | %.0f | %.0f | %.2f | %.0f | %.0f | %.0f |\n",
							kind, size, n, side, x.FirstSeconds, x.LastSeconds, x.EtcdPuts, x.EtcdKiB, x.WatchKiB, x.APIServerCPU, x.APIServerRSS, x.KCMRSS, x.EtcdDBMiB)
					}
				}
			}
		}
	}
	md.WriteString(sweepSlopes(cells, sizes, sharers))
	return saveTable("sweep", md.String(), map[string]interface{}{"stamp": st, "cells": cells})
}

// sweepSlopes returns the log-log slopes of etcd's bytes written, the watch bytes and the time to
// the last revision: against N from the fewest sharers to the most at each size, and against
// size from the smallest to the largest at each N. A slope of 1 is cost proportional, 0 cost
// that does not grow.
func sweepSlopes(cells []sweepCell, sizes, sharers []int) string {
	if len(sizes) < 2 || len(sharers) < 2 {
		return ""
	}
	var md strings.Builder
	fmt.Fprintf(&md, "\nLog-log slopes: against N (%d → %d) at each size, and against size (%d → %d KiB) at each N.\n\n| figure | side |", sharers[0], sharers[len(sharers)-1], sizes[0], sizes[len(sizes)-1])
	for _, size := range sizes {
		fmt.Fprintf(&md, " vs N at %d KiB |", size)
	}
	for _, n := range sharers {
		fmt.Fprintf(&md, " vs size at N = %d |", n)
	}
	fmt.Fprintf(&md, "\n|---|---|%s\n", strings.Repeat("---|", len(sizes)+len(sharers)))
	figures := []struct {
		name  string
		value func(sweepCell) float64
	}{
		{"etcd written", func(x sweepCell) float64 { return x.EtcdKiB }},
		{"watch sent", func(x sweepCell) float64 { return x.WatchKiB }},
		{"last revision", func(x sweepCell) float64 { return x.LastSeconds }},
	}
	for _, kind := range []string{"ConfigMap", "Secret"} {
		for _, f := range figures {
			for _, side := range []string{"stock", "patched"} {
				fmt.Fprintf(&md, "| %s, %s | %s |", kind, f.name, side)
				slope := func(kindA, sideA string, sizeA, nA, sizeB, nB int, x float64) string {
					a, okA := findCell(cells, kindA, sizeA, nA, sideA)
					b, okB := findCell(cells, kindA, sizeB, nB, sideA)
					if !okA || !okB || f.value(a) <= 0 || f.value(b) <= 0 {
						return " - |"
					}
					return fmt.Sprintf(" %.2f |", math.Log(f.value(b)/f.value(a))/math.Log(x))
				}
				lo, hi := sharers[0], sharers[len(sharers)-1]
				for _, size := range sizes {
					md.WriteString(slope(kind, side, size, lo, size, hi, float64(hi)/float64(lo)))
				}
				small, large := sizes[0], sizes[len(sizes)-1]
				for _, n := range sharers {
					md.WriteString(slope(kind, side, small, n, large, n, float64(large)/float64(small)))
				}
				md.WriteString("\n")
			}
		}
	}
	return md.String()
}

func findCell(cells []sweepCell, kind string, size, n int, side string) (sweepCell, bool) {
	for _, x := range cells {
		if x.Kind == kind && x.SizeKiB == size && x.Sharers == n && x.Side == side {
			return x, true
		}
	}
	return sweepCell{}, false
}
