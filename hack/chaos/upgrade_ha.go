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
	"os/exec"
	"strconv"
	"strings"
	"time"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
)

const hazardNS = "upgrade-ha"

// gateMetric returns what the kube-apiserver at host says of the gate: its
// kubernetes_feature_enabled sample, or "absent" (a stock server).
func gateMetric(host string) string {
	out, err := exec.Command(*kubectl, "--kubeconfig", *kubeconfig, "--server", host, "get", "--raw", "/metrics").Output()
	if err != nil {
		return "unreadable: " + err.Error()
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, `kubernetes_feature_enabled{name="WorkloadConfigSnapshot"`) {
			return line[strings.LastIndex(line, " ")+1:]
		}
	}
	return "absent"
}

// haHazard shows the hazard that docs/operations.md's HA upgrade order avoids: while a stock
// kube-apiserver serves next to the patched one, a write of a snapshotting workload that reaches
// it stores the workload without the fields, and the patched kube-controller-manager then rolls
// it once to revisions that mount its live sources. It checks the gate on each kube-apiserver by
// its own address, as the operator's check does, and leaves nothing behind.
func haHazard(ctx context.Context, admin kubernetes.Interface, patched, stock string) error {
	if got := gateMetric(patched); got != "1" {
		return fmt.Errorf("the gate metric of the patched kube-apiserver %s is %s, want 1", patched, got)
	}
	if got := gateMetric(stock); got != "absent" {
		return fmt.Errorf("the gate metric of the stock kube-apiserver %s is %s, want none", stock, got)
	}
	fmt.Printf("upgrade:   the check per kube-apiserver: %s gate metric 1, %s none (stock)\n", patched, stock)

	config, err := clientcmd.BuildConfigFromFlags(stock, *kubeconfig)
	if err != nil {
		return err
	}
	viaStock, err := kubernetes.NewForConfig(config)
	if err != nil {
		return err
	}
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: hazardNS}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	defer func() {
		_ = admin.CoreV1().Namespaces().Delete(context.Background(), hazardNS, metav1.DeleteOptions{})
	}()
	if _, err := admin.CoreV1().ConfigMaps(hazardNS).Create(ctx, &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg"}, Data: map[string]string{"v": "1"}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	labels := map[string]string{"app": "hazard"}
	d := &apps.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "hazard"}, Spec: apps.DeploymentSpec{
		Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: v1.PodSpec{
			Containers: []v1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10.1"}},
			Volumes: []v1.Volume{{Name: "config", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{
				LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}, Snapshot: ptr.To(true), Watch: ptr.To(true)}}}},
		}},
	}}
	if _, err := admin.AppsV1().Deployments(hazardNS).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		return err
	}
	first, err := latestMount(ctx, admin, 1)
	if err != nil {
		return fmt.Errorf("revision 1 of the hazard Deployment: %w", err)
	}
	if first == "cfg" {
		return fmt.Errorf("revision 1 of the hazard Deployment mounts the live ConfigMap, want a snapshot")
	}

	// Any write through the stock server (here a label) stores what that server decoded.
	got, err := viaStock.AppsV1().Deployments(hazardNS).Get(ctx, "hazard", metav1.GetOptions{})
	if err != nil {
		return err
	}
	got.Labels = map[string]string{"written-through": "stock"}
	if _, err := viaStock.AppsV1().Deployments(hazardNS).Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		return err
	}
	stored, err := admin.AppsV1().Deployments(hazardNS).Get(ctx, "hazard", metav1.GetOptions{})
	if err != nil {
		return err
	}
	if stored.Spec.Template.Spec.Volumes[0].ConfigMap.Snapshot != nil {
		return fmt.Errorf("a write through the stock kube-apiserver kept the snapshot field")
	}
	second, err := latestMount(ctx, admin, 2)
	if err != nil {
		return fmt.Errorf("after a write through the stock kube-apiserver: %w", err)
	}
	if second != "cfg" {
		return fmt.Errorf("after a write through the stock kube-apiserver revision 2 mounts %s, want the live ConfigMap cfg", second)
	}
	fmt.Printf("upgrade:   HA hazard: a label written through the stock kube-apiserver dropped snapshot and watch; the patched controller manager rolled the Deployment from %s to the live cfg (revision 2)\n", first)
	return nil
}

// latestMount waits for the hazard Deployment's revision n and returns the ConfigMap it mounts.
func latestMount(ctx context.Context, c kubernetes.Interface, n int) (string, error) {
	var mount string
	err := wait.PollUntilContextTimeout(ctx, time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		rss, err := c.AppsV1().ReplicaSets(hazardNS).List(ctx, metav1.ListOptions{LabelSelector: "app=hazard"})
		if err != nil {
			return false, nil
		}
		for _, rs := range rss.Items {
			if rs.Annotations["deployment.kubernetes.io/revision"] == strconv.Itoa(n) {
				mount = rs.Spec.Template.Spec.Volumes[0].ConfigMap.Name
				return true, nil
			}
		}
		return false, nil
	})
	return mount, err
}
