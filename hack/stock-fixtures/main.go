//go:build ignore

// Command stockfixtures prints, as JSON, a Deployment whose pod template mounts a ConfigMap, a
// Secret and a projected volume of both, and the ReplicaSet that the Deployment controller of an
// unpatched Kubernetes creates for it: objects as a cluster stores them before it is upgraded
// to a release with the WorkloadConfigSnapshot feature. hack/update-stock-fixtures.sh runs it in
// a worktree of the pristine base commit; the patched controller's tests load its output.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	_ "k8s.io/kubernetes/pkg/apis/apps/install"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	"k8s.io/kubernetes/pkg/controller/deployment"
	"k8s.io/utils/ptr"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run() error {
	labels := map[string]string{"app": "web"}
	d := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "5f0c4f6e-0000-4000-8000-000000000001", Generation: 1},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: v1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: v1.PodSpec{
					Containers: []v1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}},
					Volumes: []v1.Volume{
						{Name: "config", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "app-config"}}}},
						{Name: "creds", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "app-creds"}}},
						{Name: "both", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{
							{ConfigMap: &v1.ConfigMapProjection{LocalObjectReference: v1.LocalObjectReference{Name: "app-config"}}},
							{Secret: &v1.SecretProjection{LocalObjectReference: v1.LocalObjectReference{Name: "app-creds"}}},
						}}}},
					},
				},
			},
		},
	}
	// The defaults the apiserver applies.
	legacyscheme.Scheme.Default(d)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client := fake.NewClientset(d)
	factory := informers.NewSharedInformerFactory(client, 0)
	dc, err := deployment.NewDeploymentController(ctx, factory.Apps().V1().Deployments(), factory.Apps().V1().ReplicaSets(), factory.Core().V1().Pods(), client)
	if err != nil {
		return err
	}
	factory.Start(ctx.Done())
	go dc.Run(ctx, 1)
	var rs *appsv1.ReplicaSet
	if err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		list, err := client.AppsV1().ReplicaSets(d.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil || len(list.Items) == 0 {
			return false, err
		}
		rs = &list.Items[0]
		return true, nil
	}); err != nil {
		return fmt.Errorf("no ReplicaSet: %w", err)
	}
	stored, err := client.AppsV1().Deployments(d.Namespace).Get(ctx, d.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	stored.TypeMeta = d.TypeMeta
	rs.TypeMeta = metav1.TypeMeta{APIVersion: "apps/v1", Kind: "ReplicaSet"}
	out := json.NewEncoder(os.Stdout)
	out.SetIndent("", "  ")
	return out.Encode(map[string]interface{}{"deployment": stored, "replicaSet": rs})
}
