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
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	snapshotutil "k8s.io/component-helpers/apps/configsnapshot"
	"k8s.io/utils/ptr"
)

// The -upgrade mode takes a local cluster from stock v1.37.1 kube-apiserver and
// kube-controller-manager to the patched ones and back, and checks at each step what the
// workloads do: an upgrade rolls nothing out; a downgrade rolls out exactly the workloads whose
// templates ask for snapshots without naming one, to their live sources, and nothing else; the
// way forward again rolls nothing more. It restarts the components itself (same command line,
// another binary, the feature gate added or removed), so it runs against the local cluster of
// 'make up STOCK=1' (see hack/upgrade.sh). With -previous it ends with a downgrade to the
// previous release and the upgrade from it (upgrade_previous.go).
var (
	upgrade    = flag.Bool("upgrade", false, "instead of the chaos: swap the control plane between stock and patched binaries (see hack/upgrade.sh)")
	stockBin   = flag.String("stock", "", "directory of the stock kube-apiserver and kube-controller-manager")
	patchedBin = flag.String("patched", "", "directory of the patched kube-apiserver and kube-controller-manager")
	kubectl    = flag.String("kubectl", "kubectl", "the stock kubectl")
	quiet      = flag.Duration("quiet", 30*time.Second, "how long to watch for changes after each step")
)

const (
	upgradeNS = "upgrade"
	gate      = "--feature-gates=WorkloadConfigSnapshot=true"
)

type upgradeWorkload struct {
	kind, name string
	// snapshot: the template asks for snapshots; pinned: it names one (a rollback).
	snapshot, watch, pinned bool
}

// runUpgrade is the -upgrade mode.
func runUpgrade(ctx context.Context, c kubernetes.Interface) error {
	step("1. stock v1.37.1: workloads mounting a ConfigMap, a Secret and a projected volume")
	if _, err := c.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: upgradeNS}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	if _, err := c.CoreV1().ConfigMaps(upgradeNS).Create(ctx, &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg"}, Data: map[string]string{"v": "1"}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	if _, err := c.CoreV1().Secrets(upgradeNS).Create(ctx, &v1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds"}, Data: map[string][]byte{"p": []byte("1")}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	plain := []upgradeWorkload{{"Deployment", "plain-deploy", false, false, false}, {"DaemonSet", "plain-ds", false, false, false}, {"StatefulSet", "plain-sts", false, false, false}}
	if err := createReady(ctx, c, plain); err != nil {
		return err
	}
	before, err := observe(ctx, c)
	if err != nil {
		return err
	}

	step("2. upgrade to the patched kube-apiserver and kube-controller-manager, gate on: no revision, no pod replaced")
	if err := toPatched(); err != nil {
		return err
	}
	if err := unchanged(ctx, c, before, "the upgrade"); err != nil {
		return err
	}

	step("3. snapshotted workloads of each kind, with and without watch, and a pinned rollback")
	snap := []upgradeWorkload{
		{"Deployment", "snap-deploy", true, true, false}, {"DaemonSet", "snap-ds", true, true, false}, {"StatefulSet", "snap-sts", true, true, false},
		{"Deployment", "nowatch-deploy", true, false, false}, {"Deployment", "pinned-deploy", true, true, true},
	}
	if err := createReady(ctx, c, snap); err != nil {
		return err
	}
	if err := setData(ctx, c, "2"); err != nil {
		return err
	}
	if err := waitRevisions(ctx, c, "pinned-deploy", 2); err != nil {
		return err
	}
	if out, err := exec.Command(*kubectl, "--kubeconfig", *kubeconfig, "-n", upgradeNS, "rollout", "undo", "deployment/pinned-deploy").CombinedOutput(); err != nil {
		return fmt.Errorf("stock kubectl rollout undo: %v: %s", err, out)
	}
	all := append(append([]upgradeWorkload{}, plain...), snap...)
	upgraded, snapshotsBefore, err := settled(ctx, c, all)
	if err != nil {
		return err
	}

	step("3b. an HA control plane mid-upgrade: a stolen controller token against every kube-apiserver, and a write through the stock one")
	host, err := apiServerHost()
	if err != nil {
		return err
	}
	if err := tryAttacks(ctx, c, host, "the patched kube-apiserver (gate on)", true); err != nil {
		return err
	}
	if err := withStockAPIServer(func(stock string) error {
		if err := tryAttacks(ctx, c, stock, "a stock kube-apiserver next to the patched one", false); err != nil {
			return err
		}
		return haHazard(ctx, c, host, stock)
	}); err != nil {
		return err
	}

	step("4. downgrade to stock binaries")
	if err := downgradeTo(*stockBin, false); err != nil {
		return err
	}
	if err := ready(ctx, c, all); err != nil {
		return err
	}
	time.Sleep(*quiet)
	downgraded, err := observe(ctx, c)
	if err != nil {
		return err
	}
	// What a downgrade does, asserted: the stock controllers do not know the fields, so a
	// template that asks for snapshots (and names sources) matches no revision (they name
	// snapshots): exactly those workloads roll out once, to the live sources. Workloads without
	// the fields and pinned ones (their template names the snapshot) roll nothing.
	for _, w := range all {
		made := downgraded.revisions[w.name] - upgraded.revisions[w.name]
		want := 0
		if w.snapshot && !w.pinned {
			want = 1
		}
		fmt.Printf("upgrade:   %-11s %-15s %d new revision(s)\n", w.kind, w.name, made)
		if made != want {
			return fmt.Errorf("after the downgrade %s %s made %d revisions, want %d", w.kind, w.name, made, want)
		}
		if want == 1 {
			if got := mountedByLatest(ctx, c, w); got != "cfg" {
				return fmt.Errorf("after the downgrade %s %s mounts %s, want the live ConfigMap cfg", w.kind, w.name, got)
			}
		}
	}
	// Snapshots are ordinary ConfigMaps and Secrets to stock binaries: still there, owned by the
	// revisions that used them, deleted by the stock garbage collector with their last owner.
	if err := keptOwners(ctx, c, snapshotsBefore, "the downgrade"); err != nil {
		return err
	}

	// Nothing that the patched release stored (RBAC rules among it) lets a stolen controller
	// token do more against the stock control plane than against stock v1.37.1 itself.
	if err := tryAttacks(ctx, c, host, "the stock control plane after the downgrade", false); err != nil {
		return err
	}

	step("5. forward to the patched binaries again: nothing more rolls out")
	if err := toPatched(); err != nil {
		return err
	}
	if err := unchanged(ctx, c, downgraded, "the way forward"); err != nil {
		return err
	}
	rolled := 0
	for _, w := range all {
		if w.snapshot && !w.pinned {
			rolled++
		}
	}
	fmt.Printf("upgrade: PASS: upgrade 0 revisions/0 pods replaced; downgrade rolled the %d workloads that ask for snapshots to their live sources, nothing else; forward again 0 revisions/0 pods replaced; %d snapshots kept with their owners; stolen controller tokens Forbidden on a stock kube-apiserver next to the patched one and after the downgrade\n",
		rolled, len(snapshotsBefore))
	if *previousBin == "" {
		return nil
	}
	return fromPrevious(ctx, c, all)
}

// downgradeTo swaps the control plane for the binaries in dir, with the gate on (gated) or off:
// the controller manager first, then the API server (the supported skew).
func downgradeTo(dir string, gated bool) error {
	if err := swap("kube-controller-manager", dir, gated); err != nil {
		return err
	}
	return swap("kube-apiserver", dir, gated)
}

// toPatched upgrades the control plane to the patched binaries with the gate on: the API server
// first, then the controller manager (the supported skew).
func toPatched() error {
	if err := swap("kube-apiserver", *patchedBin, true); err != nil {
		return err
	}
	return swap("kube-controller-manager", *patchedBin, true)
}

// apiServerHost returns the address of the API server that the kubeconfig names.
func apiServerHost() (string, error) {
	config, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return "", err
	}
	return config.Host, nil
}

func step(s string) { fmt.Printf("upgrade: %s (%s)\n", s, time.Now().Format("15:04:05")) }

// state is what must not change when nothing rolls out: revisions per workload and pod UIDs.
type state struct {
	revisions map[string]int
	pods      []string
}

func observe(ctx context.Context, c kubernetes.Interface) (state, error) {
	s := state{revisions: map[string]int{}}
	rss, err := c.AppsV1().ReplicaSets(upgradeNS).List(ctx, metav1.ListOptions{})
	if err != nil {
		return s, err
	}
	for _, rs := range rss.Items {
		s.revisions[rs.Labels["app"]]++
	}
	crs, err := c.AppsV1().ControllerRevisions(upgradeNS).List(ctx, metav1.ListOptions{})
	if err != nil {
		return s, err
	}
	for _, cr := range crs.Items {
		s.revisions[cr.Labels["app"]]++
	}
	pods, err := c.CoreV1().Pods(upgradeNS).List(ctx, metav1.ListOptions{})
	if err != nil {
		return s, err
	}
	for _, p := range pods.Items {
		s.pods = append(s.pods, string(p.UID))
	}
	sort.Strings(s.pods)
	return s, nil
}

// unchanged waits the quiet period and checks that no revision was made and no pod replaced.
func unchanged(ctx context.Context, c kubernetes.Interface, before state, what string) error {
	time.Sleep(*quiet)
	after, err := observe(ctx, c)
	if err != nil {
		return err
	}
	for name, n := range after.revisions {
		if n != before.revisions[name] {
			return fmt.Errorf("%s made %d revisions of %s", what, n-before.revisions[name], name)
		}
	}
	if strings.Join(after.pods, ",") != strings.Join(before.pods, ",") {
		return fmt.Errorf("%s replaced pods", what)
	}
	fmt.Printf("upgrade:   %s: 0 revisions, 0 pods replaced (%d revisions, %d pods)\n", what, total(after.revisions), len(after.pods))
	return nil
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// settled waits until the workloads ws are ready and no revision is being made, and returns
// their state and the owners of each snapshot.
func settled(ctx context.Context, c kubernetes.Interface, ws []upgradeWorkload) (state, map[string]string, error) {
	if err := ready(ctx, c, ws); err != nil {
		return state{}, nil, err
	}
	if err := waitQuiet(ctx, c); err != nil {
		return state{}, nil, err
	}
	s, err := observe(ctx, c)
	return s, snapshotOwners(ctx, c), err
}

// keptOwners checks that every snapshot of before is still there with the same owners after what.
func keptOwners(ctx context.Context, c kubernetes.Interface, before map[string]string, what string) error {
	after := snapshotOwners(ctx, c)
	for name, owners := range before {
		if got, ok := after[name]; !ok || got != owners {
			return fmt.Errorf("after %s snapshot %s has owners %q, had %q", what, name, got, owners)
		}
	}
	return nil
}

// snapshotOwners returns the owners (names, sorted) of each snapshot in the namespace.
func snapshotOwners(ctx context.Context, c kubernetes.Interface) map[string]string {
	out := map[string]string{}
	cms, _ := c.CoreV1().ConfigMaps(upgradeNS).List(ctx, metav1.ListOptions{LabelSelector: snapshotutil.SnapshotLabel + "=true"})
	byName := map[string]*v1.ConfigMap{}
	for i := range cms.Items {
		byName[cms.Items[i].Name] = &cms.Items[i]
	}
	if holders, err := c.CoreV1().ConfigMaps(upgradeNS).List(ctx, metav1.ListOptions{LabelSelector: snapshotutil.HolderLabel + "=true"}); err == nil {
		for i := range holders.Items {
			byName[holders.Items[i].Name] = &holders.Items[i]
		}
	}
	for _, cm := range cms.Items {
		out["ConfigMap/"+cm.Name] = owners(heldOwners(&cm, byName))
	}
	secrets, _ := c.CoreV1().Secrets(upgradeNS).List(ctx, metav1.ListOptions{LabelSelector: snapshotutil.SnapshotLabel + "=true"})
	for _, s := range secrets.Items {
		out["Secret/"+s.Name] = owners(s.OwnerReferences)
	}
	return out
}

func owners(refs []metav1.OwnerReference) string {
	var names []string
	for _, r := range refs {
		names = append(names, r.Kind+"/"+r.Name)
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}

func createUpgradeWorkload(ctx context.Context, c kubernetes.Interface, w upgradeWorkload) error {
	labels := map[string]string{"app": w.name}
	var snapshot, watch *bool
	if w.snapshot {
		snapshot, watch = ptr.To(true), ptr.To(w.watch)
	}
	template := v1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: v1.PodSpec{
			Containers: []v1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10.1"}},
			Volumes: []v1.Volume{
				{Name: "config", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}, Snapshot: snapshot, Watch: watch}}},
				{Name: "creds", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "creds", Snapshot: snapshot, Watch: watch}}},
				{Name: "projected", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{
					{ConfigMap: &v1.ConfigMapProjection{LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}, Snapshot: snapshot, Watch: watch}},
					{Secret: &v1.SecretProjection{LocalObjectReference: v1.LocalObjectReference{Name: "creds"}, Snapshot: snapshot, Watch: watch}},
				}}}},
			},
		},
	}
	selector := &metav1.LabelSelector{MatchLabels: labels}
	meta := metav1.ObjectMeta{Name: w.name, Labels: labels}
	var err error
	switch w.kind {
	case "Deployment":
		_, err = c.AppsV1().Deployments(upgradeNS).Create(ctx, &apps.Deployment{ObjectMeta: meta, Spec: apps.DeploymentSpec{
			Replicas: ptr.To[int32](2), Selector: selector, Template: template}}, metav1.CreateOptions{})
	case "DaemonSet":
		_, err = c.AppsV1().DaemonSets(upgradeNS).Create(ctx, &apps.DaemonSet{ObjectMeta: meta, Spec: apps.DaemonSetSpec{Selector: selector, Template: template}}, metav1.CreateOptions{})
	case "StatefulSet":
		_, err = c.AppsV1().StatefulSets(upgradeNS).Create(ctx, &apps.StatefulSet{ObjectMeta: meta, Spec: apps.StatefulSetSpec{
			Replicas: ptr.To[int32](2), Selector: selector, Template: template, ServiceName: w.name, PodManagementPolicy: apps.ParallelPodManagement}}, metav1.CreateOptions{})
	}
	return err
}

// createReady creates the workloads ws and waits until they are ready.
func createReady(ctx context.Context, c kubernetes.Interface, ws []upgradeWorkload) error {
	for _, w := range ws {
		if err := createUpgradeWorkload(ctx, c, w); err != nil {
			return err
		}
	}
	return ready(ctx, c, ws)
}

// ready waits until every workload has observed its generation and all its pods are updated
// and ready.
func ready(ctx context.Context, c kubernetes.Interface, ws []upgradeWorkload) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		for _, w := range ws {
			ok := false
			switch w.kind {
			case "Deployment":
				d, err := c.AppsV1().Deployments(upgradeNS).Get(ctx, w.name, metav1.GetOptions{})
				ok = err == nil && d.Status.ObservedGeneration >= d.Generation && d.Status.UpdatedReplicas == *d.Spec.Replicas && d.Status.ReadyReplicas == *d.Spec.Replicas && d.Status.Replicas == *d.Spec.Replicas
			case "DaemonSet":
				ds, err := c.AppsV1().DaemonSets(upgradeNS).Get(ctx, w.name, metav1.GetOptions{})
				ok = err == nil && ds.Status.ObservedGeneration >= ds.Generation && ds.Status.DesiredNumberScheduled > 0 && ds.Status.UpdatedNumberScheduled == ds.Status.DesiredNumberScheduled && ds.Status.NumberReady == ds.Status.DesiredNumberScheduled
			case "StatefulSet":
				ss, err := c.AppsV1().StatefulSets(upgradeNS).Get(ctx, w.name, metav1.GetOptions{})
				ok = err == nil && ss.Status.ObservedGeneration >= ss.Generation && ss.Status.UpdatedReplicas == *ss.Spec.Replicas && ss.Status.ReadyReplicas == *ss.Spec.Replicas && ss.Status.CurrentRevision == ss.Status.UpdateRevision
			}
			if !ok {
				last = w.kind + " " + w.name
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("%s is not ready: %w", last, err)
	}
	return nil
}

func setData(ctx context.Context, c kubernetes.Interface, v string) error {
	cm, err := c.CoreV1().ConfigMaps(upgradeNS).Get(ctx, "cfg", metav1.GetOptions{})
	if err != nil {
		return err
	}
	cm.Data = map[string]string{"v": v}
	_, err = c.CoreV1().ConfigMaps(upgradeNS).Update(ctx, cm, metav1.UpdateOptions{})
	return err
}

func waitRevisions(ctx context.Context, c kubernetes.Interface, name string, n int) error {
	return wait.PollUntilContextTimeout(ctx, time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		s, err := observe(ctx, c)
		return err == nil && s.revisions[name] >= n, nil
	})
}

// waitQuiet waits until the revisions stop changing (the minimum interval between watched
// revisions may hold one back).
func waitQuiet(ctx context.Context, c kubernetes.Interface) error {
	prev := -1
	return wait.PollUntilContextTimeout(ctx, 15*time.Second, 3*time.Minute, false, func(ctx context.Context) (bool, error) {
		s, err := observe(ctx, c)
		if err != nil {
			return false, nil
		}
		n := total(s.revisions)
		done := n == prev
		prev = n
		return done, nil
	})
}

// mountedByLatest returns the ConfigMap that the "config" volume of the workload's latest
// revision mounts.
func mountedByLatest(ctx context.Context, c kubernetes.Interface, w upgradeWorkload) string {
	switch w.kind {
	case "Deployment":
		d, err := c.AppsV1().Deployments(upgradeNS).Get(ctx, w.name, metav1.GetOptions{})
		if err != nil {
			return ""
		}
		return d.Spec.Template.Spec.Volumes[0].ConfigMap.Name
	default:
		pods, err := c.CoreV1().Pods(upgradeNS).List(ctx, metav1.ListOptions{LabelSelector: "app=" + w.name})
		if err != nil || len(pods.Items) == 0 {
			return ""
		}
		return pods.Items[0].Spec.Volumes[0].ConfigMap.Name
	}
}

// proc is how kwokctl started a component: its command line, environment and directory,
// recorded before the first swap (a component may exit while the API server restarts: the
// controller manager and the scheduler give up when they cannot renew their leader lease).
type proc struct {
	args, env []string
	dir       string
	// kubeconfig is that of the kube-apiserver the component works with ("": -kubeconfig's).
	kubeconfig string
}

var procs = map[string]*proc{}

// recordAll records how the control plane runs, once: before the first restart.
func recordAll() error {
	if len(procs) > 0 {
		return nil
	}
	for _, c := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler"} {
		if err := record(c); err != nil {
			return err
		}
	}
	return nil
}

// record reads how the component runs now.
func record(component string) error {
	pid, err := readPid(component)
	if err != nil {
		return err
	}
	path := fmt.Sprintf("/proc/%d", pid)
	cmdline, err := os.ReadFile(path + "/cmdline")
	if err != nil {
		return fmt.Errorf("%s (pid %d) is not running: %w", component, pid, err)
	}
	environ, err := os.ReadFile(path + "/environ")
	if err != nil {
		return err
	}
	dir, err := os.Readlink(path + "/cwd")
	if err != nil {
		return err
	}
	procs[component] = &proc{
		args: strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00"),
		env:  strings.Split(strings.TrimRight(string(environ), "\x00"), "\x00"),
		dir:  dir,
	}
	return nil
}

func readPid(component string) (int, error) {
	raw, err := os.ReadFile(filepath.Join(filepath.Dir(*pidFile), component+".pid"))
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(raw)))
}

// processState says whether the component that start started still runs, for an error that
// says it does not work.
func processState(component string) string {
	pid, err := readPid(component)
	switch {
	case err != nil:
		return "no pid: " + err.Error()
	case exited(fmt.Sprintf("/proc/%d", pid)):
		return fmt.Sprintf("pid %d has exited: see its log", pid)
	}
	return fmt.Sprintf("pid %d runs", pid)
}

// swap restarts kube-apiserver or kube-controller-manager with the binary of the same name in
// dir, with the command line kwokctl gave it and the feature gate added (gated) or removed. A
// restart of kube-apiserver restarts the controller manager and the scheduler too: they exit
// when they cannot renew their leader lease meanwhile.
func swap(component, dir string, gated bool) error {
	if err := recordAll(); err != nil {
		return err
	}
	p := procs[component]
	p.args = append([]string{filepath.Join(dir, component)}, withGate(p.args[1:], gated)...)
	if err := restart(component); err != nil {
		return err
	}
	fmt.Printf("upgrade:   %s now runs %s (gate %v)\n", component, p.args[0], gated)
	if component != "kube-apiserver" {
		return nil
	}
	for _, c := range []string{"kube-controller-manager", "kube-scheduler"} {
		if err := restart(c); err != nil {
			return err
		}
	}
	return nil
}

// withGate returns args without their --feature-gates flag, and with the gate when gated.
func withGate(args []string, gated bool) []string {
	out := slicesWithout(args, "--feature-gates=")
	if gated {
		out = append(out, gate)
	}
	return out
}

// restart stops the component if it runs (SIGTERM) and starts it again as procs records it.
func restart(component string) error {
	if err := stop(component, syscall.SIGTERM); err != nil {
		return err
	}
	return start(component)
}

// stop sends sig to the component if it runs and waits until it has exited (SIGKILL after a
// minute, and waits for that too: a successor started before the process is gone would find
// its ports taken).
func stop(component string, sig syscall.Signal) error {
	pid, err := readPid(component)
	if err != nil {
		return err
	}
	path := fmt.Sprintf("/proc/%d", pid)
	if exited(path) {
		return nil
	}
	if err := syscall.Kill(pid, sig); err != nil {
		return err
	}
	gone := func(context.Context) (bool, error) { return exited(path), nil }
	if err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 60*time.Second, true, gone); err != nil {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			return err
		}
		return wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 10*time.Second, true, gone)
	}
	return nil
}

// start starts the component as procs records it, writes its pid where kwokctl reads it (so
// 'make down' stops it), and waits until the API server answers.
func start(component string) error {
	p := procs[component]
	logFile, err := os.OpenFile(filepath.Join(p.dir, "logs", component+".log"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close()
	cmd := exec.Command(p.args[0], p.args[1:]...)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = p.dir, p.env, logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(*pidFile), component+".pid"), []byte(strconv.Itoa(cmd.Process.Pid)), 0o644); err != nil {
		return err
	}
	_ = cmd.Process.Release()
	config := *kubeconfig
	if p.kubeconfig != "" {
		config = p.kubeconfig
	}
	return wait.PollUntilContextTimeout(context.Background(), 500*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		out, err := exec.Command(*kubectl, "--kubeconfig", config, "get", "--raw", "/readyz").CombinedOutput()
		return err == nil && strings.TrimSpace(string(out)) == "ok", nil
	})
}
