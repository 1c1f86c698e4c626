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

// Command crireset stops and removes every pod sandbox of a CRI runtime, as
// "crictl rmp --all --force" does: the runtime stops the containers, tears down the sandbox's
// network (CNI DEL, network namespace) and removes it. hack/node-down.sh runs it after the
// kubelet has stopped, so the host keeps nothing of the node's pods. It is built from the
// tree (k8s.io/cri-client), because crictl is not served by the module proxy here.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	remote "k8s.io/cri-client/pkg"
)

func main() {
	endpoint := flag.String("endpoint", "", "the CRI endpoint, unix:///path/to/containerd.sock")
	flag.Parse()
	if *endpoint == "" {
		fmt.Fprintln(os.Stderr, "crireset: --endpoint is required")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := reset(ctx, *endpoint); err != nil {
		fmt.Fprintln(os.Stderr, "crireset:", err)
		os.Exit(1)
	}
}

func reset(ctx context.Context, endpoint string) error {
	runtime, err := remote.NewRemoteRuntimeService(ctx, endpoint, time.Minute, nil, false)
	if err != nil {
		return err
	}
	sandboxes, err := runtime.ListPodSandbox(ctx, nil)
	if err != nil {
		return err
	}
	var failed int
	for _, s := range sandboxes {
		if err := runtime.StopPodSandbox(ctx, s.Id); err != nil {
			fmt.Fprintf(os.Stderr, "crireset: stopping sandbox %s (%s/%s): %v\n", s.Id, s.Metadata.Namespace, s.Metadata.Name, err)
			failed++
			continue
		}
		if err := runtime.RemovePodSandbox(ctx, s.Id); err != nil {
			fmt.Fprintf(os.Stderr, "crireset: removing sandbox %s (%s/%s): %v\n", s.Id, s.Metadata.Namespace, s.Metadata.Name, err)
			failed++
		}
	}
	fmt.Printf("removed %d of %d pod sandboxes\n", len(sandboxes)-failed, len(sandboxes))
	if failed > 0 {
		return fmt.Errorf("%d sandboxes were not removed", failed)
	}
	return nil
}
