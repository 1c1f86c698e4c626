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

// Command kindnet is the offline stand-in for kind's kindnetd (make kind-image): the part of its
// job that a small kind cluster needs. kind's DaemonSet runs it on every node (host network,
// NET_ADMIN) with HOST_IP; it finds its node by that address and, every 10 seconds,
//   - writes /etc/cni/net.d/10-kindnet.conflist: the ptp plugin with host-local addresses from
//     the node's spec.podCIDR (what kindnetd writes), and portmap;
//   - routes every other node's pod CIDR through that node's address (kindnetd's routes).
//
// It does not masquerade traffic leaving the cluster (there is no outside to reach offline) and
// does not implement NetworkPolicy. Users with registry access get the real kindnetd.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/vishvananda/netlink"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	netutils "k8s.io/utils/net"
)

const confPath = "/etc/cni/net.d/10-kindnet.conflist"

const confTemplate = `{
  "cniVersion": "0.4.0",
  "name": "kindnet",
  "plugins": [
    {
      "type": "ptp",
      "ipMasq": false,
      "ipam": {
        "type": "host-local",
        "dataDir": "/run/cni-ipam-state",
        "routes": [{"dst": "0.0.0.0/0"}],
        "ranges": [[{"subnet": %q}]]
      },
      "mtu": 1500
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
`

func main() {
	hostIP := os.Getenv("HOST_IP")
	if hostIP == "" {
		klog.Fatal("HOST_IP is not set")
	}
	config, err := rest.InClusterConfig()
	if err != nil {
		klog.Fatal(err)
	}
	c := kubernetes.NewForConfigOrDie(config)
	klog.InfoS("kindnet stand-in: CNI configuration and routes from the nodes' pod CIDRs", "hostIP", hostIP)
	for {
		if err := sync(context.Background(), c, hostIP); err != nil {
			klog.ErrorS(err, "Sync failed")
		}
		time.Sleep(10 * time.Second)
	}
}

func sync(ctx context.Context, c kubernetes.Interface, hostIP string) error {
	nodes, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for i := range nodes.Items {
		node := &nodes.Items[i]
		ip := internalIP(node)
		if node.Spec.PodCIDR == "" || ip == "" {
			continue
		}
		if ip == hostIP {
			if err := writeConf(node.Spec.PodCIDR); err != nil {
				return err
			}
			continue
		}
		if err := route(node.Spec.PodCIDR, ip); err != nil {
			return fmt.Errorf("route to node %s: %w", node.Name, err)
		}
	}
	return nil
}

func internalIP(node *v1.Node) string {
	for _, a := range node.Status.Addresses {
		if a.Type == v1.NodeInternalIP && netutils.IsIPv4String(a.Address) {
			return a.Address
		}
	}
	return ""
}

// writeConf writes the CNI configuration for podCIDR unless it is there already.
func writeConf(podCIDR string) error {
	want := fmt.Sprintf(confTemplate, podCIDR)
	if have, err := os.ReadFile(confPath); err == nil && string(have) == want {
		return nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(confPath), ".kindnet-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(want); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	klog.InfoS("Writing CNI configuration", "path", confPath, "podCIDR", podCIDR)
	return os.Rename(tmp.Name(), confPath)
}

// route routes podCIDR through gateway (another node's address on the kind network).
func route(podCIDR, gateway string) error {
	_, dst, err := netutils.ParseCIDRSloppy(podCIDR)
	if err != nil {
		return err
	}
	r := &netlink.Route{Dst: dst, Gw: netutils.ParseIPSloppy(gateway)}
	routes, err := netlink.RouteListFiltered(netlink.FAMILY_V4, r, netlink.RT_FILTER_DST)
	if err == nil && len(routes) == 1 && routes[0].Gw.Equal(r.Gw) {
		return nil
	}
	klog.InfoS("Routing pod CIDR", "podCIDR", podCIDR, "via", gateway)
	return netlink.RouteReplace(r)
}
