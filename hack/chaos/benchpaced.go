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
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// P6 (BENCH_SCALE=paced): one edit of a ConfigMap watched by N Deployments of one replica each,
// on the patched controller manager without a limit of rollouts per source and with one: how
// many Deployments roll out at once (sampled), and the time until every one has rolled out.
var benchPacedLimit = flag.Int("bench-paced-limit", 10, "with -bench-scenarios p6: --workload-config-snapshot-max-concurrent-rollouts-per-source of the paced run")

// pacedRun is what one P6 run measured.
type pacedRun struct {
	peak      int
	converged time.Duration
	// samples are the Deployments rolling out, every sampling interval.
	samples []int
	// cost is what the edit cost per Deployment, from the edit until every one rolled out.
	cost costs
}

// runPacedBench runs P6 without a limit and with -bench-paced-limit, in -bench-pairs pairs of
// alternating order, each run in a namespace of its own.
func runPacedBench(ctx context.Context, c kubernetes.Interface) error {
	start := time.Now()
	st := newStamp()
	setFlag("kube-controller-manager", "--leader-elect=", "false")
	runs := map[int][]pacedRun{}
	for pair := 0; pair < *benchPairs; pair++ {
		for _, limit := range alternate(pair, []int{0, *benchPacedLimit}) {
			step(fmt.Sprintf("bench: P6 pair %d of %d, paced fan-out, %d Deployments, limit %d", pair+1, *benchPairs, *benchFanOut, limit))
			setFlag("kube-controller-manager", "--workload-config-snapshot-max-concurrent-rollouts-per-source=", strconv.Itoa(limit))
			if err := swap("kube-controller-manager", *patchedBin, true); err != nil {
				return err
			}
			st.recordFlags(fmt.Sprintf("limit %d", limit))
			ns := fmt.Sprintf("bench-paced-%d-%d", limit, pair+1)
			r, err := pacedScenario(ctx, c, ns)
			emptyNamespace(c, ns)
			if err != nil {
				return fmt.Errorf("limit %d, pair %d: %w", limit, pair+1, err)
			}
			runs[limit] = append(runs[limit], r)
		}
	}
	col := func(limit int, f func(r pacedRun) float64) []float64 {
		var out []float64
		for _, r := range runs[limit] {
			out = append(out, f(r))
		}
		return out
	}
	peak := func(r pacedRun) float64 { return float64(r.peak) }
	converged := func(r pacedRun) float64 { return r.converged.Seconds() }
	results := []benchResult{
		compare("P6 Deployments rolling out at once (peak)", "workloads", col(0, peak), col(*benchPacedLimit, peak), atMost(float64(*benchPacedLimit)),
			fmt.Sprintf("N = %d Deployments of one replica watch one ConfigMap; one edit; sampled every 250 ms (a new ReplicaSet not yet available, or an old one with replicas); columns: no limit, then --workload-config-snapshot-max-concurrent-rollouts-per-source=%d", *benchFanOut, *benchPacedLimit)),
		compare("P6 edit → every Deployment rolled out", "seconds", col(0, converged), col(*benchPacedLimit, converged), target{},
			"every new ReplicaSet available and every old one scaled to 0; columns as above"),
	}
	free, paced := runs[0][0], runs[*benchPacedLimit][0]
	st.Took = time.Since(start).Round(time.Second).String()
	return writeResults("paced", results, pacedSamples(free, paced)+
		costTable(fmt.Sprintf("P6 cost per Deployment of the edit, from the edit until every one rolled out (N = %d, first pair), all clients but the bench's lists and watches (pods and their status included):", *benchFanOut),
			[]string{"no limit", fmt.Sprintf("limit %d", *benchPacedLimit)}, []costs{free.cost, paced.cost}), st)
}

// emptyNamespace empties ns of what the bench and the controllers made in it and waits until it
// is empty: the next controller manager would sync its workloads (and, after stock, snapshot every
// one of them) while it is measured. The empty namespace stays: deleting it would wait 5 s for the
// namespace controller (its grace period for API servers to see the deletion), then for the pods'
// termination, about 6 s of every run, and an empty namespace gives no controller work. Its pods
// go without a grace period (no kubelet runs them); the root CA ConfigMap stays, which the
// controller manager would otherwise publish again.
func emptyNamespace(c kubernetes.Interface, ns string) {
	ctx := context.Background()
	background := metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}
	all, notRootCA := metav1.ListOptions{}, metav1.ListOptions{FieldSelector: "metadata.name!=kube-root-ca.crt"}
	apps, core := c.AppsV1(), c.CoreV1()
	type collection struct {
		remove func() error
		list   func() (runtime.Object, error)
	}
	collections := []collection{
		{func() error { return apps.Deployments(ns).DeleteCollection(ctx, background, all) },
			func() (runtime.Object, error) { return apps.Deployments(ns).List(ctx, all) }},
		{func() error { return apps.DaemonSets(ns).DeleteCollection(ctx, background, all) },
			func() (runtime.Object, error) { return apps.DaemonSets(ns).List(ctx, all) }},
		{func() error { return apps.StatefulSets(ns).DeleteCollection(ctx, background, all) },
			func() (runtime.Object, error) { return apps.StatefulSets(ns).List(ctx, all) }},
		{func() error { return apps.ReplicaSets(ns).DeleteCollection(ctx, background, all) },
			func() (runtime.Object, error) { return apps.ReplicaSets(ns).List(ctx, all) }},
		{func() error { return apps.ControllerRevisions(ns).DeleteCollection(ctx, background, all) },
			func() (runtime.Object, error) { return apps.ControllerRevisions(ns).List(ctx, all) }},
		{func() error {
			return core.Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}, all)
		}, func() (runtime.Object, error) { return core.Pods(ns).List(ctx, all) }},
		{func() error { return core.ConfigMaps(ns).DeleteCollection(ctx, background, notRootCA) },
			func() (runtime.Object, error) { return core.ConfigMaps(ns).List(ctx, notRootCA) }},
		{func() error { return core.Secrets(ns).DeleteCollection(ctx, background, all) },
			func() (runtime.Object, error) { return core.Secrets(ns).List(ctx, all) }},
	}
	_ = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		left := 0
		for _, col := range collections {
			_ = col.remove()
			l, err := col.list()
			if err != nil {
				return false, nil
			}
			left += meta.LenList(l)
		}
		return left == 0, nil
	})
}

// slicesWithout returns args without those that start with prefix.
func slicesWithout(args []string, prefix string) []string {
	var out []string
	for _, a := range args {
		if !strings.HasPrefix(a, prefix) {
			out = append(out, a)
		}
	}
	return out
}

// pacedScenario creates the Deployments in ns, waits for them to run, edits their ConfigMap and
// samples how many roll out until all have.
func pacedScenario(ctx context.Context, c kubernetes.Interface, ns string) (pacedRun, error) {
	var r pacedRun
	if _, err := c.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return r, err
	}
	if err := createConfig(ctx, c, ns, "paced", "v1"); err != nil {
		return r, err
	}
	names := make([]string, *benchFanOut)
	err := parallel(len(names), func(i int) error {
		names[i] = fmt.Sprintf("paced-%d", i)
		labels := map[string]string{"app": names[i]}
		_, err := c.AppsV1().Deployments(ns).Create(ctx, &apps.Deployment{ObjectMeta: metav1.ObjectMeta{Name: names[i]}, Spec: apps.DeploymentSpec{
			Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: v1.PodSpec{
				Containers: []v1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}},
				Volumes: []v1.Volume{{Name: "cfg", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{
					LocalObjectReference: v1.LocalObjectReference{Name: "paced"}, Snapshot: ptr.To(true), Watch: ptr.To(true)}}}}}},
		}}, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return r, err
	}
	if err := waitRevisionRolledOut(ctx, c, ns, 1); err != nil {
		return r, fmt.Errorf("first revisions: %w", err)
	}
	// Past the minimum interval since the first revisions.
	time.Sleep(11 * time.Second)
	before, err := readCosts(ctx, c)
	if err != nil {
		return r, err
	}
	t0 := time.Now()
	if err := setConfig(ctx, c, ns, "paced", "v2"); err != nil {
		return r, err
	}
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 4*waitTimeout(len(names)), true, func(ctx context.Context) (bool, error) {
		rolling, done, err := rollouts(ctx, c, ns, 2)
		if err != nil {
			return false, nil
		}
		r.samples = append(r.samples, rolling)
		r.peak = max(r.peak, rolling)
		return done == len(names), nil
	})
	r.converged = time.Since(t0)
	if err != nil {
		return r, err
	}
	after, err := readCosts(ctx, c)
	r.cost = per(before, after, len(names), benchOwn)
	return r, err
}

// waitRevisionRolledOut waits until every Deployment of ns has rolled out its given revision.
func waitRevisionRolledOut(ctx context.Context, c kubernetes.Interface, ns string, revision int) error {
	return wait.PollUntilContextTimeout(ctx, time.Second, waitTimeout(*benchFanOut), true, func(ctx context.Context) (bool, error) {
		_, done, err := rollouts(ctx, c, ns, revision)
		return err == nil && done == *benchFanOut, nil
	})
}

// rollouts counts the Deployments of ns that roll out their ReplicaSet of the given revision
// (it exists and is not available, or another ReplicaSet has replicas) and those that have
// rolled it out.
func rollouts(ctx context.Context, c kubernetes.Interface, ns string, revision int) (rolling, done int, err error) {
	list, err := c.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, 0, err
	}
	type state struct{ hasNew, newAvailable, oldReplicas bool }
	byDeployment := map[string]*state{}
	for _, rs := range list.Items {
		owner := metav1.GetControllerOf(&rs)
		if owner == nil {
			continue
		}
		s := byDeployment[owner.Name]
		if s == nil {
			s = &state{}
			byDeployment[owner.Name] = s
		}
		if rs.Annotations["deployment.kubernetes.io/revision"] == fmt.Sprint(revision) {
			s.hasNew, s.newAvailable = true, rs.Status.AvailableReplicas >= 1 && ptr.Deref(rs.Spec.Replicas, 0) == 1
		} else if ptr.Deref(rs.Spec.Replicas, 0) > 0 || rs.Status.Replicas > 0 {
			s.oldReplicas = true
		}
	}
	for _, s := range byDeployment {
		switch {
		case s.hasNew && s.newAvailable && !s.oldReplicas:
			done++
		case s.hasNew:
			rolling++
		}
	}
	return rolling, done, nil
}

// pacedSamples is the markdown of both runs' samples, one line per second.
func pacedSamples(free, paced pacedRun) string {
	line := func(name string, r pacedRun) string {
		var b strings.Builder
		for i := 0; i < len(r.samples); i += 4 {
			fmt.Fprintf(&b, " %d", r.samples[i])
		}
		return fmt.Sprintf("- %s (Deployments rolling out, each second):%s\n", name, b.String())
	}
	out := "\n" + line("no limit", free) + line(fmt.Sprintf("limit %d", *benchPacedLimit), paced)
	if *benchOut != "" {
		_ = os.WriteFile(filepath.Join(*benchOut, "paced-samples.txt"), []byte(out), 0o644)
	}
	return out
}
