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
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
)

// The attacks of a stolen token of the snapshot writer or a workload controller, run by the
// -upgrade mode against a stock kube-apiserver: one that runs next to the patched one on the
// same etcd (an HA control plane upgraded one server at a time) and, after the downgrade, the
// stock control plane. Neither may let the config-snapshot-writer, deployment, daemon-set or
// statefulset controller's service account mint a service account token, change or delete a
// user's Secret or ConfigMap, or read a Secret.

var workloadControllers = []string{"config-snapshot-writer", "deployment-controller", "daemon-set-controller", "statefulset-controller"}

// attackResult is what one attack did: refused (Forbidden) or not.
type attackResult struct{ name, err string }

// tryAttacks runs the attacks with a token of each controller against the API server at host,
// and returns an error naming every attack that was not Forbidden. reads says whether the
// server may grant the controllers reads (a patched server: its authorizer grants them, its
// admission plugin refuses every write below).
func tryAttacks(ctx context.Context, admin kubernetes.Interface, host, what string, reads bool) error {
	var failed []string
	for _, sa := range workloadControllers {
		c, err := asServiceAccount(ctx, admin, host, sa)
		if err != nil {
			return err
		}
		for _, r := range attacks(ctx, c, reads) {
			if r.err != "" {
				failed = append(failed, fmt.Sprintf("%s: %s: %s", sa, r.name, r.err))
			}
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("%s: a stolen controller token got through:\n  %s", what, strings.Join(failed, "\n  "))
	}
	fmt.Printf("upgrade:   %s: every attack of the writer and the three controller tokens Forbidden (token Secret for clusterrole-aggregation-controller, change/delete a user's Secret and ConfigMap%s)\n",
		what, map[bool]string{false: ", read a Secret", true: ""}[reads])
	return nil
}

func attacks(ctx context.Context, c kubernetes.Interface, reads bool) []attackResult {
	forbidden := func(name string, err error) attackResult {
		if apierrors.IsForbidden(err) {
			return attackResult{name: name}
		}
		if err == nil {
			return attackResult{name, "allowed"}
		}
		return attackResult{name, err.Error()}
	}
	var out []attackResult
	_, err := c.CoreV1().Secrets(metav1.NamespaceSystem).Create(ctx, &v1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "stolen-token", Annotations: map[string]string{v1.ServiceAccountNameKey: "clusterrole-aggregation-controller"}},
		Type:       v1.SecretTypeServiceAccountToken}, metav1.CreateOptions{})
	out = append(out, forbidden("create a token Secret for clusterrole-aggregation-controller", err))
	_, err = c.CoreV1().Secrets(upgradeNS).Patch(ctx, "creds", types.MergePatchType, []byte(`{"data":{"p":"b3duZWQ="}}`), metav1.PatchOptions{})
	out = append(out, forbidden("change a user's Secret", err))
	_, err = c.CoreV1().ConfigMaps(upgradeNS).Patch(ctx, "cfg", types.MergePatchType, []byte(`{"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"Namespace","name":"x","uid":"x"}]}}`), metav1.PatchOptions{})
	out = append(out, forbidden("own a user's ConfigMap", err))
	err = c.CoreV1().Secrets(upgradeNS).Delete(ctx, "creds", metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
	out = append(out, forbidden("delete a user's Secret", err))
	err = c.CoreV1().ConfigMaps(upgradeNS).Delete(ctx, "cfg", metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
	out = append(out, forbidden("delete a user's ConfigMap", err))
	if !reads {
		_, err = c.CoreV1().Secrets(upgradeNS).Get(ctx, "creds", metav1.GetOptions{})
		out = append(out, forbidden("read a user's Secret", err))
	}
	return out
}

// asServiceAccount returns a client of the API server at host that authenticates with a
// fresh token of the service account kube-system/name (TokenRequest, as `kubectl create token`).
func asServiceAccount(ctx context.Context, admin kubernetes.Interface, host, name string) (kubernetes.Interface, error) {
	tr, err := admin.CoreV1().ServiceAccounts(metav1.NamespaceSystem).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)}}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("a token of %s: %w", name, err)
	}
	config, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return nil, err
	}
	config = rest.AnonymousClientConfig(config)
	config.Host, config.BearerToken = host, tr.Status.Token
	return kubernetes.NewForConfig(config)
}

// withStockAPIServer starts a stock kube-apiserver next to the running (patched) one, with its
// command line on another port and the feature gate removed, runs f with its address, and
// stops it (by its pid) when f returns.
func withStockAPIServer(f func(host string) error) error {
	if err := recordAll(); err != nil {
		return err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	p := procs["kube-apiserver"]
	args := []string{"--secure-port=" + strconv.Itoa(port)}
	for i := 1; i < len(p.args); i++ {
		switch a := p.args[i]; {
		case a == "--secure-port" || a == "--feature-gates":
			i++ // and its value
		case strings.HasPrefix(a, "--secure-port=") || strings.HasPrefix(a, "--feature-gates="):
		default:
			args = append(args, a)
		}
	}
	logFile, err := os.OpenFile(filepath.Join(p.dir, "logs", "kube-apiserver-stock-ha.log"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close()
	cmd := exec.Command(filepath.Join(*stockBin, "kube-apiserver"), args...)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = p.dir, p.env, logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(time.Minute):
			_ = cmd.Process.Kill()
			<-done
		}
	}()
	host := "https://127.0.0.1:" + strconv.Itoa(port)
	if err := wait.PollUntilContextTimeout(context.Background(), 500*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		out, err := exec.Command(*kubectl, "--kubeconfig", *kubeconfig, "--server", host, "get", "--raw", "/readyz").CombinedOutput()
		return err == nil && strings.TrimSpace(string(out)) == "ok", nil
	}); err != nil {
		return fmt.Errorf("the stock kube-apiserver next to the patched one is not ready (see logs/kube-apiserver-stock-ha.log): %w", err)
	}
	fmt.Printf("upgrade:   a stock kube-apiserver (pid %d) serves %s next to the patched one, on the same etcd\n", cmd.Process.Pid, host)
	return f(host)
}
