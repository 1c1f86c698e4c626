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
	"sort"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	snapshotutil "k8s.io/component-helpers/apps/configsnapshot"
)

var (
	storm         = flag.Bool("storm", false, "instead of the chaos: rewrite one ConfigMap that a workload of each kind watches -edits times in -storm-duration, with kube-controller-manager running, and report the revisions each workload made and when the last content was rolled out")
	stormEdits    = flag.Int("edits", 100, "with -storm: edits of the ConfigMap")
	stormDuration = flag.Duration("storm-duration", 10*time.Second, "with -storm: how long the edits take")
	maxRevisions  = flag.Int("max-revisions", 5, "with -storm: the most revisions a workload may make (fails above)")
	interval      = flag.Duration("min-interval", 10*time.Second, "with -storm: kube-controller-manager's --workload-config-snapshot-min-interval, for the check that the last content rolls out within about one interval")
)

// runStorm is the -storm mode: a ConfigMap watched by one workload of each kind is rewritten many
// times a second; each workload must make at most -max-revisions revisions and roll out the last
// content within about one minimum interval after the last edit.
func runStorm(ctx context.Context, c kubernetes.Interface, ns string) error {
	cm := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "storm"}, Data: map[string]string{"v": "0"}}
	if _, err := c.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		return err
	}
	var ws []workload
	for _, kind := range []string{"Deployment", "DaemonSet", "StatefulSet"} {
		w := workload{kind, strings.ToLower(kind), "storm"}
		if err := create(ctx, c, ns, w); err != nil {
			return err
		}
		ws = append(ws, w)
	}
	if err := converge(ctx, c, ns, ws, *timeout); err != nil {
		return fmt.Errorf("before the storm: %w", err)
	}
	before := map[string]int{}
	for _, w := range ws {
		before[w.kind] = len(latestRevisions(ctx, c, ns, w))
	}

	start := time.Now()
	for i := 1; i <= *stormEdits; i++ {
		cm, err := c.CoreV1().ConfigMaps(ns).Get(ctx, "storm", metav1.GetOptions{})
		if err != nil {
			return err
		}
		cm.Data = map[string]string{"v": strconv.Itoa(i)}
		if _, err := c.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			return err
		}
		time.Sleep(time.Until(start.Add(time.Duration(i) * *stormDuration / time.Duration(*stormEdits))))
	}
	last := time.Now()
	hash := snapshotutil.ConfigMapContentHash(&v1.ConfigMap{Data: map[string]string{"v": strconv.Itoa(*stormEdits)}})
	rolled := map[string]time.Duration{}
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, *timeout, true, func(ctx context.Context) (bool, error) {
		for _, w := range ws {
			if _, done := rolled[w.kind]; done {
				continue
			}
			if revs := latestRevisions(ctx, c, ns, w); len(revs) > 0 && snapshotutil.IsSnapshotName(revs[len(revs)-1], "storm", "", hash) {
				rolled[w.kind] = time.Since(last)
			}
		}
		return len(rolled) == len(ws), nil
	}); err != nil {
		return fmt.Errorf("the last content was not rolled out to every workload in %v: %v", *timeout, rolled)
	}
	if err := converge(ctx, c, ns, ws, *timeout); err != nil {
		return err
	}
	var failed []string
	for _, w := range ws {
		made := len(latestRevisions(ctx, c, ns, w)) - before[w.kind]
		fmt.Printf("storm: %-11s %d edits in %v: %d revisions; the last content's revision made %v after the last edit\n",
			w.kind, *stormEdits, last.Sub(start).Round(100*time.Millisecond), made, rolled[w.kind].Round(100*time.Millisecond))
		if made > *maxRevisions {
			failed = append(failed, fmt.Sprintf("%s made %d revisions (at most %d)", w.kind, made, *maxRevisions))
		}
		if rolled[w.kind] > *interval+5*time.Second {
			failed = append(failed, fmt.Sprintf("%s rolled the last content out %v after the last edit (minimum interval %v)", w.kind, rolled[w.kind], *interval))
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("storm: %s", strings.Join(failed, "; "))
	}
	fmt.Println("storm: PASS; 0 leaked, 0 lost, 0 duplicated snapshots")
	return nil
}

// latestRevisions returns the snapshots that the revisions of a workload mount, oldest first,
// whatever the state of its rollout.
func latestRevisions(ctx context.Context, c kubernetes.Interface, ns string, w workload) []string {
	selector := metav1.ListOptions{LabelSelector: "app=" + w.name}
	type numbered struct {
		n        int64
		snapshot string
	}
	var revs []numbered
	if w.kind == "Deployment" {
		rss, err := c.AppsV1().ReplicaSets(ns).List(ctx, selector)
		if err != nil {
			return nil
		}
		for _, rs := range rss.Items {
			n, _ := strconv.ParseInt(rs.Annotations["deployment.kubernetes.io/revision"], 10, 64)
			revs = append(revs, numbered{n, rs.Spec.Template.Spec.Volumes[0].ConfigMap.Name})
		}
	} else {
		crs, err := c.AppsV1().ControllerRevisions(ns).List(ctx, selector)
		if err != nil {
			return nil
		}
		for _, cr := range crs.Items {
			var data struct {
				Spec struct {
					Template v1.PodTemplateSpec `json:"template"`
				} `json:"spec"`
			}
			if json.Unmarshal(cr.Data.Raw, &data) == nil && len(data.Spec.Template.Spec.Volumes) > 0 {
				revs = append(revs, numbered{cr.Revision, data.Spec.Template.Spec.Volumes[0].ConfigMap.Name})
			}
		}
	}
	sort.Slice(revs, func(i, j int) bool { return revs[i].n < revs[j].n })
	out := make([]string, 0, len(revs))
	for _, r := range revs {
		out = append(out, r.snapshot)
	}
	return out
}
