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

// Command chaos kills and restarts kube-controller-manager at random moments while the
// ConfigMaps that Deployments, DaemonSets and StatefulSets watch are edited, then checks that
// every workload converges to the latest content and that no snapshot is leaked, lost or
// duplicated. With -storm it measures a storm of edits instead (storm.go), with -upgrade an
// upgrade and downgrade of the control plane (upgrade.go), with -bench the cost of the patched
// kube-controller-manager against stock v1.37.1 (bench.go). It runs against the local cluster of 'make up' (see hack/chaos.sh), built in the
// tree so that it uses the tree's client-go and the snapshot names of the series.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	snapshotutil "k8s.io/component-helpers/apps/configsnapshot"
	"k8s.io/utils/ptr"
)

var (
	kubeconfig = flag.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig of the cluster")
	pidFile    = flag.String("kcm-pid-file", "", "pid file of kube-controller-manager (kwokctl's)")
	perKind    = flag.Int("workloads", 4, "workloads of each kind")
	sources    = flag.Int("sources", 3, "ConfigMaps the workloads share")
	duration   = flag.Duration("duration", 2*time.Minute, "how long the ConfigMaps are edited (every 0-1 s) and kube-controller-manager killed (every 5-25 s)")
	seed       = flag.Int64("seed", time.Now().UnixNano(), "random seed")
	timeout    = flag.Duration("timeout", 5*time.Minute, "how long the workloads may take to converge")
	keep       = flag.Bool("keep", false, "keep the namespace")
)

func main() {
	flag.Parse()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		os.Exit(1)
	}
}

type workload struct{ kind, name, source string }

func run() error {
	ctx := context.Background()
	config, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return err
	}
	config.QPS, config.Burst = 50, 100
	if *bench && *benchUnlimited {
		// No client-side rate limit (client-go makes none for a negative QPS).
		config.QPS = -1
	}
	c := kubernetes.NewForConfigOrDie(config)
	if *upgrade {
		return runUpgrade(ctx, c)
	}
	if *bench {
		// The bench's data (tens of thousands of objects) is created faster than its scenarios
		// edit, which keep the client of the other modes.
		setup := rest.CopyConfig(config)
		setup.QPS, setup.Burst = 500, 1000
		return runBench(ctx, c, kubernetes.NewForConfigOrDie(setup))
	}
	rng := rand.New(rand.NewSource(*seed))
	ns := fmt.Sprintf("chaos-%d", time.Now().Unix())
	if *storm {
		fmt.Printf("storm: namespace %s, %d edits in %v of a ConfigMap that a workload of each kind watches\n", ns, *stormEdits, *stormDuration)
	} else {
		fmt.Printf("chaos: seed %d, namespace %s, %d workloads of each kind on %d sources, %v of edits and kills\n", *seed, ns, *perKind, *sources, *duration)
	}
	if _, err := c.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	if !*keep {
		defer func() { _ = c.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) }()
	}
	if *storm {
		return runStorm(ctx, c, ns)
	}
	var urls map[string]string
	if *ha {
		if err := record("kube-controller-manager"); err != nil {
			return err
		}
		base := *procs["kube-controller-manager"]
		defer stopReplicas(&base)
		if urls, err = startReplicas(); err != nil {
			return err
		}
		l, err := waitLeader(urls)
		if err != nil {
			return err
		}
		fmt.Printf("chaos: three kube-controller-managers, lease %v; %s leads\n", *haLease, l)
	}
	for i := 0; i < *sources; i++ {
		cm := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cfg-%d", i)}, Data: map[string]string{"v": "0"}}
		if _, err := c.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	var ws []workload
	for _, kind := range []string{"Deployment", "DaemonSet", "StatefulSet"} {
		for i := 0; i < *perKind; i++ {
			w := workload{kind, fmt.Sprintf("%s-%d", strings.ToLower(kind), i), fmt.Sprintf("cfg-%d", i%*sources)}
			if err := create(ctx, c, ns, w); err != nil {
				return err
			}
			ws = append(ws, w)
		}
	}
	if err := converge(ctx, c, ns, ws, *timeout); err != nil {
		return fmt.Errorf("before the chaos: %w", err)
	}
	before := revisionCount(ctx, c, ns)

	// Edits at random intervals; kills at random moments meanwhile, each keeping the
	// controller manager down for up to 3 s (and then until it holds the leader lease again),
	// so that some edits happen while it is down and others while it runs.
	start := time.Now()
	end := start.Add(*duration)
	var wg sync.WaitGroup
	var killErr error
	killed := 0
	counts := &haCounts{}
	leases, stopLeases := context.WithCancel(ctx)
	defer stopLeases()
	if *ha {
		go watchLeases(leases, c, counts)
	}
	if *ha && *haPaced > 0 {
		go watchSlots(leases, c, ns, counts)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		krng := rand.New(rand.NewSource(*seed + 1))
		if *ha {
			killErr = disruptHA(krng, urls, start, end, counts)
			return
		}
		for {
			time.Sleep(time.Duration(5000+krng.Intn(20000)) * time.Millisecond)
			if time.Now().After(end) {
				return
			}
			if err := restartControllerManager(time.Duration(krng.Intn(3000)) * time.Millisecond); err != nil {
				killErr = err
				return
			}
			killed++
		}
	}()
	edits := 0
	for time.Now().Before(end) {
		edits++
		name := fmt.Sprintf("cfg-%d", rng.Intn(*sources))
		cm, err := c.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cm.Data = map[string]string{"v": strconv.Itoa(edits)}
		if _, err := c.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			return err
		}
		time.Sleep(time.Duration(rng.Intn(1000)) * time.Millisecond)
	}
	wg.Wait()
	if killErr != nil {
		return killErr
	}
	edited := time.Since(start)
	if err := converge(ctx, c, ns, ws, *timeout); err != nil {
		return err
	}
	converged := time.Since(start) - edited
	if *ha && *haPaced > 0 {
		counts.mu.Lock()
		over, peak, source := counts.overLimit, counts.peakSlots, counts.peakSource
		counts.mu.Unlock()
		if over > 0 {
			return fmt.Errorf("in %d samples more than %d workloads held a slot of one source (peak %d, of %s)", over, *haPaced, peak, source)
		}
	}

	// A restart (leader changes, with -ha) with nothing to do creates no revision and replaces
	// no pod.
	revisions, pods := revisionCount(ctx, c, ns), podUIDs(ctx, c, ns)
	quietChanges := counts.leaderChanges
	if *ha {
		if err := quietLeaderChanges(urls, 2, counts); err != nil {
			return err
		}
	} else if err := restartControllerManager(time.Second); err != nil {
		return err
	}
	time.Sleep(20 * time.Second)
	if got := revisionCount(ctx, c, ns); got != revisions {
		return fmt.Errorf("a restart with nothing to do made %d revisions", got-revisions)
	}
	if got := podUIDs(ctx, c, ns); !apiequality.Semantic.DeepEqual(got, pods) {
		return fmt.Errorf("a restart with nothing to do replaced pods")
	}
	if *ha {
		counts.mu.Lock()
		defer counts.mu.Unlock()
		fmt.Printf("chaos -ha: PASS: %d edits in %v; disruptions: %d leader kills, %d leader pauses past the %v lease, %d etcd restart, %d kube-apiserver pause past the lease, %d replicas restarted after they exited; %d leader changes\n",
			edits, edited.Round(time.Second), counts.kills, counts.pauses, *haLease, counts.etcdRestarts, counts.apiserverPauses, counts.started, counts.leaderChanges)
		fmt.Printf("  converged to the last content: %d of %d workloads, %v after the last edit\n", len(ws), len(ws), converged.Round(time.Second))
		fmt.Printf("  snapshots leaked, dangling, lost or duplicated: 0 (%d revisions made, %d before)\n", revisions-before, before)
		fmt.Printf("  workloads with two revisions that mount the same snapshot: 0 of %d\n", len(ws))
		fmt.Printf("  revisions made and pods replaced by %d leader changes without edits: 0, 0\n", counts.leaderChanges-quietChanges)
		if *haPaced > 0 {
			fmt.Printf("  samples in which more than %d workloads held a slot of one source: %d of %d (peak %d, of %s)\n", *haPaced, counts.overLimit, counts.slotSamples, counts.peakSlots, counts.peakSource)
			if counts.overLimit > 0 {
				return fmt.Errorf("the limit of rollouts per source was exceeded after the edits")
			}
		}
		return nil
	}
	fmt.Printf("chaos: PASS: %d edits in %v with %d kills of kube-controller-manager; %d workloads converged %v after the last edit; %d revisions made (%d before); 0 leaked, 0 lost, 0 duplicated snapshots; a quiet restart made no revision and replaced no pod\n",
		edits, edited.Round(time.Second), killed, len(ws), converged.Round(time.Second), revisions-before, before)
	return nil
}

func create(ctx context.Context, c kubernetes.Interface, ns string, w workload) error {
	return createWith(ctx, c, ns, w, 2)
}

// createWith creates w with the given replicas (Deployments, StatefulSets; 0 for a DaemonSet:
// no node matches its selector); it mounts w.source with snapshot and watch.
func createWith(ctx context.Context, c kubernetes.Interface, ns string, w workload, replicas int32) error {
	labels := map[string]string{"app": w.name}
	template := v1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: v1.PodSpec{
			Containers: []v1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10.1",
				VolumeMounts: []v1.VolumeMount{{Name: "config", MountPath: "/etc/config"}}}},
			Volumes: []v1.Volume{{Name: "config", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{
				LocalObjectReference: v1.LocalObjectReference{Name: w.source}, Snapshot: ptr.To(true), Watch: ptr.To(true)}}}},
		},
	}
	selector := &metav1.LabelSelector{MatchLabels: labels}
	meta := metav1.ObjectMeta{Name: w.name}
	var err error
	switch w.kind {
	case "Deployment":
		_, err = c.AppsV1().Deployments(ns).Create(ctx, &apps.Deployment{ObjectMeta: meta, Spec: apps.DeploymentSpec{
			Replicas: ptr.To(replicas), Selector: selector, Template: template}}, metav1.CreateOptions{})
	case "DaemonSet":
		if replicas == 0 {
			// No node matches: a DaemonSet without pods.
			template.Spec.NodeSelector = map[string]string{"configsnapshot.bench/no-pods": "true"}
		}
		_, err = c.AppsV1().DaemonSets(ns).Create(ctx, &apps.DaemonSet{ObjectMeta: meta, Spec: apps.DaemonSetSpec{
			Selector: selector, Template: template}}, metav1.CreateOptions{})
	case "StatefulSet":
		_, err = c.AppsV1().StatefulSets(ns).Create(ctx, &apps.StatefulSet{ObjectMeta: meta, Spec: apps.StatefulSetSpec{
			Replicas: ptr.To(replicas), Selector: selector, Template: template, ServiceName: w.name,
			PodManagementPolicy: apps.ParallelPodManagement}}, metav1.CreateOptions{})
	}
	return err
}

// restartControllerManager kills kube-controller-manager (SIGKILL: no graceful shutdown), keeps
// it down for the given time, and starts it again with the same command line, directory and
// environment (see start).
func restartControllerManager(down time.Duration) error {
	if err := record("kube-controller-manager"); err != nil {
		return err
	}
	if err := stop("kube-controller-manager", syscall.SIGKILL); err != nil {
		return err
	}
	time.Sleep(down)
	return start("kube-controller-manager")
}

// exited reports whether the process of /proc/<pid> proc is gone or a zombie (its parent, which
// may be an init that does not reap, has not waited for it).
func exited(proc string) bool {
	stat, err := os.ReadFile(proc + "/stat")
	if err != nil {
		return true
	}
	// "<pid> (<comm>) <state> ...": the state follows the last ')'.
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) > 0 && (fields[0] == "Z" || fields[0] == "X")
}

// converge waits until every workload runs the latest content of its source and the snapshots
// of the namespace are consistent (see check).
func converge(ctx context.Context, c kubernetes.Interface, ns string, ws []workload, timeout time.Duration) error {
	var last error
	if err := wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(context.Context) (bool, error) {
		// The checks get a context of their own: the last error must say what did not converge.
		last = check(context.Background(), c, ns, ws)
		return last == nil, nil
	}); err != nil {
		return fmt.Errorf("no convergence in %v: %w", timeout, last)
	}
	return nil
}

type revision struct {
	uid      types.UID
	snapshot string
	latest   bool
}

// check returns what is not (yet) as it must be: a workload whose latest revision does not
// mount a snapshot of its source's current content, or whose pods are not all on it; a
// snapshot owned by anything but a live revision that mounts it (leaked), a revision whose
// snapshot is gone or not owned by it (lost), two snapshots of one content (duplicated), a pod
// whose snapshot is gone.
func check(ctx context.Context, c kubernetes.Interface, ns string, ws []workload) error {
	cms, err := c.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	byName := map[string]*v1.ConfigMap{}
	for i := range cms.Items {
		byName[cms.Items[i].Name] = &cms.Items[i]
	}
	revs := map[string][]revision{}
	// running are the snapshots that the workloads' latest revisions mount.
	running := map[string]bool{}
	for _, w := range ws {
		r, err := revisions(ctx, c, ns, w)
		if err != nil {
			return err
		}
		revs[w.name] = r
		mounted := map[string]bool{}
		for _, rev := range r {
			if mounted[rev.snapshot] {
				return fmt.Errorf("%s %s has two revisions that mount %s", w.kind, w.name, rev.snapshot)
			}
			mounted[rev.snapshot] = true
		}
		var latest *revision
		for i := range r {
			if r[i].latest {
				latest = &r[i]
			}
		}
		if latest == nil {
			return fmt.Errorf("%s %s has no current revision", w.kind, w.name)
		}
		running[latest.snapshot] = true
		snapshot, source := byName[latest.snapshot], byName[w.source]
		if snapshot == nil || source == nil || !apiequality.Semantic.DeepEqual(snapshot.Data, source.Data) {
			return fmt.Errorf("%s %s runs %s, not the content of %s", w.kind, w.name, latest.snapshot, w.source)
		}
		pods, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + w.name})
		if err != nil {
			return err
		}
		for _, p := range pods.Items {
			if name := p.Spec.Volumes[0].ConfigMap.Name; byName[name] == nil {
				return fmt.Errorf("pod %s mounts %s, which does not exist", p.Name, name)
			} else if p.DeletionTimestamp == nil && name != latest.snapshot {
				return fmt.Errorf("%s %s is rolling out: pod %s mounts %s", w.kind, w.name, p.Name, name)
			}
		}
	}
	mounts := map[types.UID]string{}
	for _, r := range revs {
		for _, rev := range r {
			mounts[rev.uid] = rev.snapshot
		}
	}
	contents := map[string]string{}
	var names []string
	for name := range byName {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		cm := byName[name]
		if !snapshotutil.IsSnapshot(cm.Labels) {
			continue
		}
		owners := heldOwners(cm, byName)
		if len(cm.OwnerReferences) == 0 || len(owners) == 0 {
			return fmt.Errorf("snapshot %s has no owner (leaked)", name)
		}
		for _, o := range owners {
			if mounts[o.UID] != name {
				return fmt.Errorf("snapshot %s is owned by %s %s, which is no revision that mounts it (leaked)", name, o.Kind, o.Name)
			}
		}
		// Two snapshots of the content that the latest revisions run are duplicates when both
		// have room for more owners (snapshotutil.MaxOwners): a full one is not extended. Older
		// contents are not compared: their owners are pruned with the revision history.
		key := cm.Annotations[snapshotutil.SourceAnnotation] + "/" + cm.Annotations[snapshotutil.ContentHashAnnotation]
		if !running[name] || len(cm.OwnerReferences) >= snapshotutil.MaxOwners {
			continue
		}
		if other, ok := contents[key]; ok {
			return fmt.Errorf("snapshots %s and %s hold the same content (duplicated)", other, name)
		}
		contents[key] = name
	}
	for uid, name := range mounts {
		cm := byName[name]
		if cm == nil {
			return fmt.Errorf("snapshot %s of a revision does not exist (lost)", name)
		}
		owned := false
		for _, o := range heldOwners(cm, byName) {
			owned = owned || o.UID == uid
		}
		if !owned {
			return fmt.Errorf("snapshot %s is not owned by a revision that mounts it", name)
		}
	}
	return nil
}

// heldOwners returns the owners of the snapshot cm: those on it and those listed in its holders
// among byName (docs/design.md, "Holders"), without the holders themselves.
func heldOwners(cm *v1.ConfigMap, byName map[string]*v1.ConfigMap) []metav1.OwnerReference {
	refs := append([]metav1.OwnerReference(nil), cm.OwnerReferences...)
	for _, h := range byName {
		if snapshotutil.IsHolder(h.Labels) && h.Annotations[snapshotutil.HoldsAnnotation] == snapshotutil.KindConfigMap+"/"+cm.Name {
			refs = append(refs, h.OwnerReferences...)
		}
	}
	var out []metav1.OwnerReference
	for _, ref := range refs {
		if !snapshotutil.IsHolderLink(ref) {
			out = append(out, ref)
		}
	}
	return out
}

// revisions returns the revisions of a workload with the snapshot each mounts; latest is the
// one the workload runs.
func revisions(ctx context.Context, c kubernetes.Interface, ns string, w workload) ([]revision, error) {
	selector := metav1.ListOptions{LabelSelector: "app=" + w.name}
	var out []revision
	switch w.kind {
	case "Deployment":
		d, err := c.AppsV1().Deployments(ns).Get(ctx, w.name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		if d.Status.ObservedGeneration < d.Generation || d.Status.UpdatedReplicas != *d.Spec.Replicas || d.Status.Replicas != *d.Spec.Replicas {
			return nil, fmt.Errorf("Deployment %s is rolling out", w.name)
		}
		rss, err := c.AppsV1().ReplicaSets(ns).List(ctx, selector)
		if err != nil {
			return nil, err
		}
		for _, rs := range rss.Items {
			out = append(out, revision{rs.UID, rs.Spec.Template.Spec.Volumes[0].ConfigMap.Name,
				rs.Annotations["deployment.kubernetes.io/revision"] == d.Annotations["deployment.kubernetes.io/revision"]})
		}
		return out, nil
	case "DaemonSet":
		ds, err := c.AppsV1().DaemonSets(ns).Get(ctx, w.name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		if ds.Status.ObservedGeneration < ds.Generation || ds.Status.UpdatedNumberScheduled != ds.Status.DesiredNumberScheduled {
			return nil, fmt.Errorf("DaemonSet %s is rolling out", w.name)
		}
		// A DaemonSet runs its latest revision.
		return controllerRevisions(ctx, c, ns, selector, "")
	default:
		ss, err := c.AppsV1().StatefulSets(ns).Get(ctx, w.name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		if ss.Status.ObservedGeneration < ss.Generation || ss.Status.UpdateRevision != ss.Status.CurrentRevision || ss.Status.UpdatedReplicas != *ss.Spec.Replicas {
			return nil, fmt.Errorf("StatefulSet %s is rolling out", w.name)
		}
		return controllerRevisions(ctx, c, ns, selector, ss.Status.UpdateRevision)
	}
}

// controllerRevisions returns the ControllerRevisions of a DaemonSet or StatefulSet with the
// snapshot that the template in each one's data mounts; latest is the named one, or the one of
// the highest number when name is empty.
func controllerRevisions(ctx context.Context, c kubernetes.Interface, ns string, selector metav1.ListOptions, name string) ([]revision, error) {
	crs, err := c.AppsV1().ControllerRevisions(ns).List(ctx, selector)
	if err != nil {
		return nil, err
	}
	var highest int64
	for _, cr := range crs.Items {
		highest = max(highest, cr.Revision)
	}
	var out []revision
	for _, cr := range crs.Items {
		var data struct {
			Spec struct {
				Template v1.PodTemplateSpec `json:"template"`
			} `json:"spec"`
		}
		if err := json.Unmarshal(cr.Data.Raw, &data); err != nil || len(data.Spec.Template.Spec.Volumes) == 0 {
			return nil, fmt.Errorf("ControllerRevision %s: no pod template (%v)", cr.Name, err)
		}
		latest := cr.Name == name || name == "" && cr.Revision == highest
		out = append(out, revision{cr.UID, data.Spec.Template.Spec.Volumes[0].ConfigMap.Name, latest})
	}
	return out, nil
}

func revisionCount(ctx context.Context, c kubernetes.Interface, ns string) int {
	rss, _ := c.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
	crs, _ := c.AppsV1().ControllerRevisions(ns).List(ctx, metav1.ListOptions{})
	return len(rss.Items) + len(crs.Items)
}

func podUIDs(ctx context.Context, c kubernetes.Interface, ns string) []string {
	pods, _ := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	var uids []string
	for _, p := range pods.Items {
		uids = append(uids, string(p.UID))
	}
	sort.Strings(uids)
	return uids
}
