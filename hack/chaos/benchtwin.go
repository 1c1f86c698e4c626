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
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// P3's image edits on two control planes at once (-bench-twin). A second kube-apiserver, the
// twin, runs beside kwokctl's on the same etcd under a prefix of its own (a cluster of its own
// that shares the machine), with a controller manager of its own. In each of P3's pairs one
// controller manager is stock and the other patched, each on its own kube-apiserver (which side
// runs where alternates from pair to pair), and their image edits alternate edit by edit, 100 ms
// apart: a slow spell of the machine falls on both sides of a pair, where the two sides timed
// one after the other 20 seconds apart fell into different spells.
var benchTwin = flag.Bool("bench-twin", false, "with -bench-latency-pairs: time P3's image edits of stock and of the patched controller manager side by side, each on a kube-apiserver of its own (the second one on the same etcd under a prefix of its own), edit by edit alternating")

const (
	twinAPIServer  = "kube-apiserver-twin"
	twinController = "kube-controller-manager-twin"
)

// twinPlane is the second control plane: its client and the kubeconfig its components use.
type twinPlane struct {
	c          kubernetes.Interface
	kubeconfig string
	// mainPort and twinPort are the kube-apiservers' secure ports.
	mainPort, twinPort string
}

// startTwin starts the twin kube-apiserver with kwokctl's command line, another secure port and
// etcd prefix, and waits until it answers. Its data (the nodes' names, the Secrets and ConfigMaps
// that fill the caches) is the main cluster's: P3's controller managers then sync the same.
func startTwin(ctx context.Context, c kubernetes.Interface) (*twinPlane, error) {
	if err := recordAll(); err != nil {
		return nil, err
	}
	api := procs["kube-apiserver"]
	mainPort := flagValue(api.args, "--secure-port=")
	if mainPort == "" {
		return nil, fmt.Errorf("kube-apiserver has no --secure-port")
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	args := withFlag(withFlag(api.args, "--secure-port=", strconv.Itoa(port)), "--etcd-prefix=", "/twin-registry")
	procs[twinAPIServer] = &proc{args: args, env: api.env, dir: api.dir}
	tw := &twinPlane{mainPort: mainPort, twinPort: strconv.Itoa(port)}
	if tw.kubeconfig, err = tw.rewrite(*kubeconfig); err != nil {
		return nil, err
	}
	procs[twinAPIServer].kubeconfig = tw.kubeconfig
	if err := start(twinAPIServer); err != nil {
		return nil, fmt.Errorf("the twin kube-apiserver: %w (%s)", err, processState(twinAPIServer))
	}
	config, err := clientcmd.BuildConfigFromFlags("", tw.kubeconfig)
	if err != nil {
		return nil, err
	}
	config.QPS, config.Burst = 50, 100
	tw.c = kubernetes.NewForConfigOrDie(config)
	setup := *config
	setup.QPS, setup.Burst = 500, 1000
	if err := benchData(ctx, kubernetes.NewForConfigOrDie(&setup)); err != nil {
		return nil, err
	}
	nodes, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, n := range nodes.Items {
		node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: n.Labels}}
		if _, err := tw.c.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			return nil, err
		}
	}
	return tw, nil
}

// stopTwin stops what startTwin and runOnTwin started.
func stopTwin() {
	for _, component := range []string{twinController, twinAPIServer} {
		if _, ok := procs[component]; ok {
			_ = stop(component, syscall.SIGTERM)
		}
	}
}

// runOnTwin (re)starts the twin's controller manager with the main one's command line (as swap
// makes it: the binary of dir, the gate when gated), its kubeconfigs pointed at the twin
// kube-apiserver, another secure port and --workload-config-snapshot-min-interval=minInterval
// (none when empty).
func (tw *twinPlane) runOnTwin(dir string, gated bool, minInterval string) error {
	kcm := procs["kube-controller-manager"]
	var args []string
	for _, a := range withGate(kcm.args[1:], gated) {
		for _, f := range []string{"--kubeconfig=", "--authentication-kubeconfig=", "--authorization-kubeconfig="} {
			if path, ok := strings.CutPrefix(a, f); ok {
				twin, err := tw.rewrite(path)
				if err != nil {
					return err
				}
				a = f + twin
			}
		}
		args = append(args, a)
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	args = withFlag(args, "--secure-port=", strconv.Itoa(port))
	if args = slicesWithout(args, "--workload-config-snapshot-min-interval="); minInterval != "" {
		args = append(args, "--workload-config-snapshot-min-interval="+minInterval)
	}
	procs[twinController] = &proc{args: append([]string{filepath.Join(dir, "kube-controller-manager")}, args...), env: kcm.env, dir: kcm.dir, kubeconfig: tw.kubeconfig}
	if _, err := readPid(twinController); err != nil {
		return start(twinController) // the first pair's
	}
	return restart(twinController)
}

// rewrite writes a copy of the kubeconfig at path whose servers are the twin kube-apiserver
// instead of the main one, and returns the copy's path.
func (tw *twinPlane) rewrite(path string) (string, error) {
	config, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return "", err
	}
	for _, cluster := range config.Clusters {
		u, err := url.Parse(cluster.Server)
		if err != nil {
			return "", err
		}
		host, port, _ := net.SplitHostPort(u.Host)
		if port != tw.mainPort {
			return "", fmt.Errorf("%s: server %s is not the main kube-apiserver (port %s)", path, cluster.Server, tw.mainPort)
		}
		u.Host = net.JoinHostPort(host, tw.twinPort)
		cluster.Server = u.String()
	}
	out := path + ".twin"
	return out, clientcmd.WriteToFile(*config, out)
}

// twinModes names the sides of P3's pairs side by side, by "the patched side".
var twinModes = map[bool]string{true: "p3-patched", false: "p3-stock"}

// controllers starts the controller managers of pair pair (from 0) of P3's pairs side by side:
// the patched one on the main kube-apiserver in odd pairs (the first, the third, ...) and on the
// twin in even ones, stock on the other; the patched one without the minimum interval
// (--workload-config-snapshot-min-interval=0, which holds back watch-triggered revisions only).
// It returns each side's client, by "the patched side".
func (tw *twinPlane) controllers(c kubernetes.Interface, st *stamp, pair int) (map[bool]kubernetes.Interface, error) {
	patchedOnMain := pair%2 == 0
	bins := map[bool]string{true: *patchedBin, false: *stockBin}
	minInterval := map[bool]string{true: "0"}
	setFlag("kube-controller-manager", "--workload-config-snapshot-min-interval=", minInterval[patchedOnMain])
	if err := swap("kube-controller-manager", bins[patchedOnMain], patchedOnMain); err != nil {
		return nil, err
	}
	if err := tw.runOnTwin(bins[!patchedOnMain], !patchedOnMain, minInterval[!patchedOnMain]); err != nil {
		return nil, fmt.Errorf("the twin kube-controller-manager: %w (%s)", err, processState(twinController))
	}
	st.recordFlags(twinModes[patchedOnMain])
	st.Flags[twinModes[!patchedOnMain]] = strings.Join(procs[twinController].args[1:], " ")
	return map[bool]kubernetes.Interface{patchedOnMain: c, !patchedOnMain: tw.c}, nil
}

// twinImagePair runs pair pair (from 0) of P3's pairs side by side (see controllers): the image
// edits of both sides, then the patched side's watched ConfigMap edits beside stock's image
// edits (watchedBeside). The first pair also reads what each edit costs on the patched side's
// kube-apiserver (the main one).
func twinImagePair(ctx context.Context, c kubernetes.Interface, tw *twinPlane, st *stamp, pair int) (stock, patched *benchRun, err error) {
	planes, err := tw.controllers(c, st, pair)
	if err != nil {
		return nil, nil, err
	}
	ns := fmt.Sprintf("bench-p3-%d", pair+1)
	// Both sides' workloads are made at once, each on its own kube-apiserver and client.
	sides := make([]*latencySide, 2)
	err = parallel(len(sides), func(i int) error {
		patchedSide := i == 1
		var err error
		if sides[i], err = newLatencySide(ctx, planes[patchedSide], ns); err != nil {
			return fmt.Errorf("the %s side: %w", twinModes[patchedSide], err)
		}
		return nil
	})
	for _, cs := range planes {
		defer emptyNamespace(cs, ns)
	}
	if err != nil {
		return nil, nil, err
	}
	stock, patched = &benchRun{}, &benchRun{}
	// timed runs edit (n edits of the patched side), and in the first pair reads what they cost
	// the patched side's kube-apiserver into patched.path[i].
	timed := func(i, n int, edit func() error) error {
		if pair > 0 {
			return edit()
		}
		var err error
		patched.path[i], err = editCosts(ctx, planes[true], n, edit)
		return err
	}
	step("bench:   P3 image edits, stock and patched side by side")
	if err := timed(0, len(sides[1].ws)**benchImageRounds, func() error {
		samples, err := interleavedLatencies(ctx, sides, *benchImageRounds, pair)
		if err == nil {
			stock.latency, patched.latency = samples[0], samples[1]
		}
		return err
	}); err != nil {
		return nil, nil, err
	}
	step("bench:   P3 watched ConfigMap edits without the minimum interval, beside stock's image edits")
	half := everyOther(sides[1].ws)
	if err := timed(1, len(half), func() error { return watchedBeside(ctx, sides, half, pair, stock, patched) }); err != nil {
		return nil, nil, fmt.Errorf("watched edits: %w", err)
	}
	if err := stop(twinController, syscall.SIGTERM); err != nil {
		return nil, nil, err
	}
	return stock, patched, nil
}

// everyOther returns the indices of every other workload of each kind of ws, from the first.
func everyOther(ws []workload) []int {
	var out []int
	seen := map[string]int{}
	for i, w := range ws {
		if seen[w.kind]%2 == 0 {
			out = append(out, i)
		}
		seen[w.kind]++
	}
	return out
}

// watchedBeside edits the ConfigMap of the workloads of the patched side (sides[1]) whose indices
// are given, which a watch-triggered revision follows at once (its minimum interval is 0), and
// makes the next image edit of the same workloads on the stock side beside it, edit by edit; it
// adds the samples to patched.latency by "source/<Kind>" and to stock.latency by "beside/<Kind>".
func watchedBeside(ctx context.Context, sides []*latencySide, indices []int, pair int, stock, patched *benchRun) error {
	image := fmt.Sprintf("registry.k8s.io/pause:3.%d", 10-*benchImageRounds)
	l, err := interleavedRound(ctx, sides, indices, pair, func(s int, w workload) error {
		if s == 1 {
			return setConfig(ctx, sides[s].c, sides[s].ns, w.source, "v2")
		}
		return setImage(ctx, sides[s].c, sides[s].ns, w, image)
	})
	if err != nil {
		return err
	}
	for kind, v := range l[0] {
		stock.latency["beside/"+kind] = v
	}
	for kind, v := range l[1] {
		patched.latency["source/"+kind] = v
	}
	return nil
}

// twinImagePairs runs the -bench-latency-pairs pairs of P3's image edits side by side into
// runs["p3-stock"] and runs["p3-patched"].
func twinImagePairs(ctx context.Context, c kubernetes.Interface, st *stamp, runs map[string][]*benchRun) error {
	step("bench: a second kube-apiserver for P3's image edits side by side")
	tw, err := startTwin(ctx, c)
	defer stopTwin()
	if err != nil {
		return err
	}
	for pair := 0; pair < *benchLatencyPairs; pair++ {
		step(fmt.Sprintf("bench: P3 pair %d of %d, stock and patched kube-controller-manager side by side", pair+1, *benchLatencyPairs))
		stock, patched, err := twinImagePair(ctx, c, tw, st, pair)
		if err != nil {
			return fmt.Errorf("P3 pair %d: %w", pair+1, err)
		}
		runs["p3-stock"] = append(runs["p3-stock"], stock)
		runs["p3-patched"] = append(runs["p3-patched"], patched)
	}
	return nil
}

// withFlag returns args with the flag that starts with prefix set to value (added if absent).
func withFlag(args []string, prefix, value string) []string {
	return append(slicesWithout(args, prefix), prefix+value)
}

// flagValue returns the value of the flag that starts with prefix, or "".
func flagValue(args []string, prefix string) string {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, prefix); ok {
			return v
		}
	}
	return ""
}
