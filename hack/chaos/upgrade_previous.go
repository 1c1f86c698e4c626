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

	"k8s.io/client-go/kubernetes"
)

// previousBin is the previous release's binaries (hack/build-previous.sh): with it, -upgrade ends
// with a downgrade to that release and an upgrade from it, which must roll nothing either way.
var previousBin = flag.String("previous", "", "directory of the previous release's kube-apiserver and kube-controller-manager (optional)")

// fromPrevious is -upgrade's last steps, run on this release with the gate on: a downgrade to the
// previous release, which runs what this one snapshotted and snapshots workloads of its own,
// then the upgrade from it. Neither swap makes a revision or replaces a pod, and this release
// keeps the snapshots that the previous one made, with their owners. all are the workloads of
// the steps before.
func fromPrevious(ctx context.Context, c kubernetes.Interface, all []upgradeWorkload) error {
	step("6. downgrade to the previous release, gate on: no revision, no pod replaced")
	before, err := observe(ctx, c)
	if err != nil {
		return err
	}
	if err := downgradeTo(*previousBin, true); err != nil {
		return err
	}
	if err := unchanged(ctx, c, before, "the downgrade to the previous release"); err != nil {
		return err
	}

	step("7. the previous release snapshots workloads of each kind and rolls out a watched change")
	prev := []upgradeWorkload{{"Deployment", "prev-deploy", true, true, false}, {"DaemonSet", "prev-ds", true, true, false}, {"StatefulSet", "prev-sts", true, true, false}}
	if err := createReady(ctx, c, prev); err != nil {
		return err
	}
	if err := setData(ctx, c, "3"); err != nil {
		return err
	}
	for _, w := range prev {
		if err := waitRevisions(ctx, c, w.name, 2); err != nil {
			return fmt.Errorf("the previous release rolled out no watched change of %s %s: %w", w.kind, w.name, err)
		}
	}
	all = append(append([]upgradeWorkload{}, all...), prev...)
	previous, snapshotsBefore, err := settled(ctx, c, all)
	if err != nil {
		return err
	}

	step("8. upgrade from the previous release: no revision, no pod replaced, its snapshots kept")
	if err := toPatched(); err != nil {
		return err
	}
	if err := unchanged(ctx, c, previous, "the upgrade from the previous release"); err != nil {
		return err
	}
	if err := keptOwners(ctx, c, snapshotsBefore, "the upgrade from the previous release"); err != nil {
		return err
	}
	fmt.Printf("upgrade: PASS: from and to the previous release 0 revisions/0 pods replaced; %d snapshots kept with their owners\n", len(snapshotsBefore))
	return nil
}
