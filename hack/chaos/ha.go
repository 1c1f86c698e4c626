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
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"math/rand"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	snapshotutil "k8s.io/component-helpers/apps/configsnapshot"
)

// The -ha mode runs the chaos on a highly available control plane: three kube-controller-managers
// with leader election and short leases. During the edits it kills the leader (SIGKILL) or pauses
// it (SIGSTOP) past its lease and resumes it, with a stale cache, at random moments; once each, it
// restarts etcd and pauses kube-apiserver past the lease. A replica that exits (a leader that
// lost its lease exits by design) is started again.
var (
	ha      = flag.Bool("ha", false, "with the chaos: three kube-controller-managers with leader election; kill or pause the leader, restart etcd, pause kube-apiserver")
	haLease = flag.Duration("ha-lease", 4*time.Second, "with -ha: the leader election lease (renew deadline 3/4 of it, retry period 1/4)")
	haPaced = flag.Int("max-rollouts", 0, "with -ha: the three kube-controller-managers' --workload-config-snapshot-max-concurrent-rollouts-per-source; the chaos checks that no more workloads than that hold a slot of one source at any moment")
)

// replicas are the components of the three kube-controller-managers: kwokctl's, and two more.
var replicas = []string{"kube-controller-manager", "kube-controller-manager-2", "kube-controller-manager-3"}

// haCounts are what the disruptions did, for the summary.
type haCounts struct {
	mu                                     sync.Mutex
	kills, pauses, leaderChanges           int
	etcdRestarts, apiserverPauses, started int
	lastHolder                             string
	// slotSamples, peakSlots and overLimit are what watchSlots saw: the samples, the most
	// workloads holding a slot of one source (peakSource) at once, and the samples above the limit.
	slotSamples, peakSlots, overLimit int
	peakSource                        string
}

func (h *haCounts) add(n *int) {
	h.mu.Lock()
	*n++
	h.mu.Unlock()
}

// startReplicas restarts kwokctl's kube-controller-manager with leader election and short leases,
// and starts two more replicas like it on ports of their own. It returns their metrics URLs.
func startReplicas() (map[string]string, error) {
	for _, component := range []string{"kube-controller-manager", "etcd", "kube-apiserver"} {
		if err := record(component); err != nil {
			return nil, err
		}
	}
	base := procs["kube-controller-manager"]
	urls := map[string]string{}
	for i, name := range replicas {
		port := 0
		args := []string{base.args[0]}
		for _, a := range base.args[1:] {
			if v, ok := strings.CutPrefix(a, "--secure-port="); ok {
				if i == 0 {
					fmt.Sscanf(v, "%d", &port)
					args = append(args, a)
				}
				continue
			}
			if !strings.HasPrefix(a, "--leader-elect") {
				args = append(args, a)
			}
		}
		if i > 0 {
			var err error
			if port, err = freePort(); err != nil {
				return nil, err
			}
			args = append(args, fmt.Sprintf("--secure-port=%d", port))
		}
		if *haPaced > 0 {
			args = append(args, fmt.Sprintf("--workload-config-snapshot-max-concurrent-rollouts-per-source=%d", *haPaced))
		}
		args = append(args, "--leader-elect=true",
			fmt.Sprintf("--leader-elect-lease-duration=%v", *haLease),
			fmt.Sprintf("--leader-elect-renew-deadline=%v", *haLease*3/4),
			fmt.Sprintf("--leader-elect-retry-period=%v", *haLease/4))
		procs[name] = &proc{args: args, env: base.env, dir: base.dir}
		run := start
		if i == 0 {
			run = restart
		}
		if err := run(name); err != nil {
			return nil, fmt.Errorf("starting %s: %w", name, err)
		}
		urls[name] = fmt.Sprintf("https://127.0.0.1:%d/metrics", port)
	}
	return urls, nil
}

// stopReplicas stops the two replicas that startReplicas added and restarts kwokctl's as it was.
func stopReplicas(base *proc) {
	for _, name := range replicas[1:] {
		if stop(name, syscall.SIGTERM) == nil {
			// hack/chaos.sh stops, by the pids in these files, the replicas left running.
			_ = os.Remove(filepath.Join(filepath.Dir(*pidFile), name+".pid"))
		}
	}
	procs["kube-controller-manager"] = base
	_ = restart("kube-controller-manager")
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// leader returns the replica that holds the leader lease, as its own metrics say; "" when none.
func leader(urls map[string]string) string {
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	for _, name := range replicas {
		resp, err := client.Get(urls[name])
		if err != nil {
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(body), `leader_election_master_status{name="kube-controller-manager"} 1`) {
			return name
		}
	}
	return ""
}

// waitLeader waits until a replica holds the lease and returns it.
func waitLeader(urls map[string]string) (string, error) {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if l := leader(urls); l != "" {
			return l, nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return "", fmt.Errorf("no kube-controller-manager holds the leader lease")
}

// watchLeases counts the changes of the lease's holder until ctx is done.
func watchLeases(ctx context.Context, c kubernetes.Interface, h *haCounts) {
	for ctx.Err() == nil {
		if l, err := c.CoordinationV1().Leases("kube-system").Get(ctx, "kube-controller-manager", metav1.GetOptions{}); err == nil && l.Spec.HolderIdentity != nil {
			h.mu.Lock()
			if h.lastHolder != "" && *l.Spec.HolderIdentity != h.lastHolder {
				h.leaderChanges++
			}
			h.lastHolder = *l.Spec.HolderIdentity
			h.mu.Unlock()
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// watchSlots samples, until ctx is done, how many workloads hold a slot of each source of ns: the
// Deployments, DaemonSets and StatefulSets that own one of its snapshots (docs/design.md, "Paced
// fan-out").
func watchSlots(ctx context.Context, c kubernetes.Interface, ns string, h *haCounts) {
	for ctx.Err() == nil {
		if list, err := c.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{LabelSelector: snapshotutil.SnapshotLabel + "=true"}); err == nil {
			holders := map[string]map[types.UID]bool{}
			for _, cm := range list.Items {
				source := cm.Annotations[snapshotutil.SourceAnnotation]
				for _, ref := range cm.OwnerReferences {
					if ref.Kind == "Deployment" || ref.Kind == "DaemonSet" || ref.Kind == "StatefulSet" {
						if holders[source] == nil {
							holders[source] = map[types.UID]bool{}
						}
						holders[source][ref.UID] = true
					}
				}
			}
			h.mu.Lock()
			h.slotSamples++
			for source, uids := range holders {
				if len(uids) > h.peakSlots {
					h.peakSlots, h.peakSource = len(uids), source
				}
				if len(uids) > *haPaced {
					h.overLimit++
				}
			}
			h.mu.Unlock()
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// keepRunning starts the replicas, and the scheduler, that exited (a leader that lost its lease
// exits, as kube-controller-manager does by design).
func keepRunning(h *haCounts) error {
	for _, name := range append(replicas, "kube-scheduler") {
		if name == "kube-scheduler" && procs[name] == nil {
			continue
		}
		pid, err := readPid(name)
		if err != nil {
			return err
		}
		if exited(fmt.Sprintf("/proc/%d", pid)) {
			if err := start(name); err != nil {
				return err
			}
			h.add(&h.started)
		}
	}
	return nil
}

// pause stops component with SIGSTOP for d, then resumes it.
func pause(component string, d time.Duration) error {
	pid, err := readPid(component)
	if err != nil {
		return err
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return err
	}
	time.Sleep(d)
	return syscall.Kill(pid, syscall.SIGCONT)
}

// disruptHA disrupts the control plane until end: every 5-20 s the leader is killed (and started
// again 0-3 s later) or paused for the lease and 2 s more; at a third of the time etcd restarts,
// at two thirds kube-apiserver pauses past the lease.
func disruptHA(rng *rand.Rand, urls map[string]string, begin, end time.Time, h *haCounts) error {
	etcdAt, apiserverAt := begin.Add(end.Sub(begin)/3), begin.Add(end.Sub(begin)*2/3)
	etcdDone, apiserverDone := false, false
	if err := record("kube-scheduler"); err != nil {
		return err
	}
	for {
		time.Sleep(time.Duration(5000+rng.Intn(15000)) * time.Millisecond)
		now := time.Now()
		if now.After(end) {
			return nil
		}
		switch {
		case !etcdDone && now.After(etcdAt):
			etcdDone = true
			if err := restart("etcd"); err != nil {
				return fmt.Errorf("restarting etcd: %w", err)
			}
			h.add(&h.etcdRestarts)
		case !apiserverDone && now.After(apiserverAt):
			apiserverDone = true
			if err := pause("kube-apiserver", *haLease+2*time.Second); err != nil {
				return err
			}
			h.add(&h.apiserverPauses)
		default:
			l, err := waitLeader(urls)
			if err != nil {
				return err
			}
			if rng.Intn(2) == 0 {
				if err := stop(l, syscall.SIGKILL); err != nil {
					return err
				}
				time.Sleep(time.Duration(rng.Intn(3000)) * time.Millisecond)
				if err := start(l); err != nil {
					return err
				}
				h.add(&h.kills)
			} else {
				// Paused past its lease, it wakes with a stale cache: it must notice that it lost the
				// lease before it writes anything.
				if err := pause(l, *haLease+2*time.Second); err != nil {
					return err
				}
				h.add(&h.pauses)
			}
		}
		// A replica that lost its lease exits a moment after it resumes.
		time.Sleep(*haLease)
		if err := keepRunning(h); err != nil {
			return err
		}
	}
}

// quietLeaderChanges kills the leader n times with nothing to do: the new leaders must create no
// revision and replace no pod (checked by the caller).
func quietLeaderChanges(urls map[string]string, n int, h *haCounts) error {
	for i := 0; i < n; i++ {
		l, err := waitLeader(urls)
		if err != nil {
			return err
		}
		if err := stop(l, syscall.SIGKILL); err != nil {
			return err
		}
		h.add(&h.kills)
		if _, err := waitLeader(urls); err != nil {
			return err
		}
		if err := start(l); err != nil {
			return err
		}
		time.Sleep(5 * time.Second)
	}
	return nil
}
