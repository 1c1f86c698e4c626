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

package deployment

// make bench (P4) copies this file, with the shim of the tree (sync_bench_shim_{stock,patched}),
// into pkg/controller/deployment of the stock and of the patched tree and compares the figures.

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/klog/v2"
)

// BenchmarkForkSyncDeployment measures one sync of a Deployment at rest (its ReplicaSet and
// status current: the sync reads the caches and writes nothing) whose template mounts four
// ConfigMaps without snapshot, the case that must cost what it costs upstream.
func BenchmarkForkSyncDeployment(b *testing.B) {
	// No logging: the figure is the sync, not the test logger.
	ctx := klog.NewContext(context.Background(), logr.Discard())
	f := newFixture(b)
	d := newDeployment("web", 3, nil, nil, nil, map[string]string{"app": "web"})
	for i := 0; i < 4; i++ {
		name := fmt.Sprintf("config-%d", i)
		d.Spec.Template.Spec.Volumes = append(d.Spec.Template.Spec.Volumes, v1.Volume{Name: name,
			VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: name}}}})
		f.objects = append(f.objects, &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: d.Namespace}, Data: map[string]string{"k": "v"}})
	}
	f.dLister = append(f.dLister, d)
	f.objects = append(f.objects, d)
	c, factory, err := f.newController(ctx)
	if err != nil {
		b.Fatal(err)
	}
	if err := enableForkFeature(c, factory); err != nil {
		b.Fatal(err)
	}
	key := d.Namespace + "/" + d.Name
	// Syncs until the ReplicaSet and the status it writes are in the caches and a sync writes
	// nothing more.
	for i := 0; i < 5; i++ {
		f.client.ClearActions()
		if err := c.syncDeployment(ctx, key); err != nil {
			b.Fatal(err)
		}
		if len(f.client.Actions()) == 0 {
			break
		}
		copyToCache(ctx, b, f, factory)
	}
	if n := len(f.client.Actions()); n != 0 {
		b.Fatalf("the Deployment is not at rest: %d actions per sync", n)
	}
	b.ResetTimer()
	before := cpuTime(b)
	for i := 0; i < b.N; i++ {
		if err := c.syncDeployment(ctx, key); err != nil {
			b.Fatal(err)
		}
	}
	// The CPU time the process spent (user and system, every thread: the garbage collector's
	// too), which a shared machine's other tenants and the hypervisor's steal do not add to,
	// where they add to ns/op, the wall time.
	b.ReportMetric(float64(cpuTime(b)-before)/float64(b.N), "cpu-ns/op")
}

// cpuTime returns the CPU time the process has used so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// copyToCache puts the Deployments and ReplicaSets of the fake client into the informers.
func copyToCache(ctx context.Context, b *testing.B, f *fixture, factory informers.SharedInformerFactory) {
	ds, err := f.client.AppsV1().Deployments(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	for i := range ds.Items {
		_ = factory.Apps().V1().Deployments().Informer().GetIndexer().Update(&ds.Items[i])
	}
	rss, err := f.client.AppsV1().ReplicaSets(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	for i := range rss.Items {
		rs := &rss.Items[i]
		// A ReplicaSet at rest: every replica ready and available.
		rs.Status = apps.ReplicaSetStatus{Replicas: *rs.Spec.Replicas, ReadyReplicas: *rs.Spec.Replicas, AvailableReplicas: *rs.Spec.Replicas, ObservedGeneration: rs.Generation}
		_ = factory.Apps().V1().ReplicaSets().Informer().GetIndexer().Update(rs)
		if _, err := f.client.AppsV1().ReplicaSets(rs.Namespace).UpdateStatus(ctx, rs, metav1.UpdateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
