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
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
)

// What a scenario costs the control plane, not only how long it takes: the API server's
// requests by verb, resource and response code, its CPU time, the requests of its loopback
// client (the admission plugin's reads among them), and etcd's writes.
var benchUnlimited = flag.Bool("bench-unlimited", false, "with -bench: lift the client-side rate limit of both controller managers (--kube-api-qps, --kube-api-burst) and of the bench's own client, so that time measures work rather than QPS")

// unlimitedQPS is what "no client-side rate limit" means on the command line.
const unlimitedQPS = "100000"

// costs is a reading of the control plane's counters, by key:
//
//	"request VERB resource code"  apiserver_request_total
//	"time VERB resource"          apiserver_request_duration_seconds_sum (seconds)
//	"cpu kube-apiserver"          process_cpu_seconds_total of kube-apiserver
//	"cpu kube-controller-manager" process_cpu_seconds_total of kube-controller-manager
//	"syncs deployment"            workqueue_adds_total of kube-controller-manager's deployment queue:
//	                              the Deployment syncs queued (an add of a key already queued is not counted)
//	"loopback METHOD code"        rest_client_requests_total of kube-apiserver (its own clients)
//	"etcd puts", "etcd put bytes" etcd_mvcc_put_total, etcd_debugging_mvcc_total_put_size_in_bytes
//	"watch bytes resource"        apiserver_watch_events_sizes_sum: watch events sent to every watcher
//	"rss kube-apiserver"          process_resident_memory_bytes of kube-apiserver (a level, not a count)
//	"etcd db bytes"               etcd_mvcc_db_total_size_in_bytes (a level)
//	"apf wait level"              apiserver_flowcontrol_request_wait_duration_seconds_sum (seconds)
//	"apf waited level"            its _count: the requests of that priority level
type costs map[string]float64

// readCosts reads the API server's metrics and, when the bench knows where they are, etcd's and
// kube-controller-manager's CPU time.
func readCosts(ctx context.Context, c kubernetes.Interface) (costs, error) {
	raw, err := c.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	out := costs{}
	samples(string(raw), func(name, labels string, v float64) {
		switch name {
		case "apiserver_request_total":
			out[fmt.Sprintf("request %s %s %s", label(labels, "verb"), label(labels, "resource"), label(labels, "code"))] += v
		case "apiserver_request_duration_seconds_sum":
			out[fmt.Sprintf("time %s %s", label(labels, "verb"), label(labels, "resource"))] += v
		case "process_cpu_seconds_total":
			out["cpu kube-apiserver"] += v
		case "rest_client_requests_total":
			out[fmt.Sprintf("loopback %s %s", label(labels, "method"), label(labels, "code"))] += v
		case "apiserver_watch_events_sizes_sum":
			out["watch bytes "+label(labels, "resource")] += v
		case "process_resident_memory_bytes":
			out["rss kube-apiserver"] = v
		case "apiserver_flowcontrol_request_wait_duration_seconds_sum":
			out["apf wait "+label(labels, "priority_level")] += v
		case "apiserver_flowcontrol_request_wait_duration_seconds_count":
			out["apf waited "+label(labels, "priority_level")] += v
		}
	})
	if url := etcdURL(); url != "" {
		body, err := httpGet(url + "/metrics")
		if err != nil {
			return nil, err
		}
		samples(body, func(name, _ string, v float64) {
			switch name {
			case "etcd_mvcc_put_total":
				out["etcd puts"] += v
			case "etcd_debugging_mvcc_total_put_size_in_bytes":
				out["etcd put bytes"] += v
			case "etcd_mvcc_db_total_size_in_bytes":
				out["etcd db bytes"] = v
			}
		})
	}
	// kube-controller-manager may be between a stop and a start (the readings around an edit
	// are taken while it runs): without it, the reading has no such key.
	if *kcmMetrics != "" {
		if body, err := kcmGet("/metrics"); err == nil {
			samples(body, func(name, labels string, v float64) {
				switch {
				case name == "process_cpu_seconds_total":
					out["cpu kube-controller-manager"] = v
				case name == "workqueue_adds_total" && label(labels, "name") == "deployment":
					out["syncs deployment"] = v
				}
			})
		}
	}
	return out, nil
}

// samples calls f with each sample of a Prometheus text exposition.
func samples(text string, f func(name, labels string, v float64)) {
	for _, line := range strings.Split(text, "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		series, value, ok := strings.Cut(line, " ")
		if i := strings.LastIndexByte(line, '}'); i > 0 {
			series, value, ok = line[:i+1], strings.TrimSpace(line[i+1:]), true
		}
		v, err := strconv.ParseFloat(strings.Fields(value + " ")[0], 64)
		if !ok || err != nil {
			continue
		}
		name, labels, _ := strings.Cut(series, "{")
		f(name, strings.TrimSuffix(labels, "}"), v)
	}
}

// etcdURL is the first of the API server's --etcd-servers ("" when unknown).
func etcdURL() string {
	p := procs["kube-apiserver"]
	if p == nil {
		return ""
	}
	for _, a := range p.args {
		if v, ok := strings.CutPrefix(a, "--etcd-servers="); ok {
			return strings.Split(v, ",")[0]
		}
	}
	return ""
}

func httpGet(url string) (string, error) {
	resp, err := (&http.Client{Timeout: time.Minute}).Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return string(body), err
}

// per returns what changed between two readings, divided by n (per revision, per edit), without
// the requests that the bench itself makes (keys for which skip is true).
func per(before, after costs, n int, skip func(key string) bool) costs {
	out := costs{}
	for k, v := range after {
		if d := v - before[k]; d != 0 && (skip == nil || !skip(k)) {
			out[k] = d / float64(n)
		}
	}
	return out
}

// requestsByVerb sums a reading's requests by "VERB resource" (all response codes).
func (cs costs) requestsByVerb() map[string]float64 {
	out := map[string]float64{}
	for k, v := range cs {
		if rest, ok := strings.CutPrefix(k, "request "); ok {
			f := strings.Fields(rest + " ")
			out[strings.Join(f[:len(f)-1], " ")] += v
		}
	}
	return out
}

// costTable returns columns of per-revision costs as Markdown: requests by verb, resource and
// response code, their total, then the API server's CPU, its loopback requests and etcd's writes.
func costTable(title string, names []string, cols []costs) string {
	keys := map[string]bool{}
	for _, c := range cols {
		for k := range c {
			if strings.HasPrefix(k, "request ") || strings.HasPrefix(k, "loopback ") {
				keys[k] = true
			}
		}
	}
	var md strings.Builder
	fmt.Fprintf(&md, "\n%s\n\n| per revision | %s |\n|---|%s\n", title, strings.Join(names, " | "), strings.Repeat("---|", len(names)))
	row := func(name string, value func(c costs) float64, format string) {
		cells := make([]string, len(cols))
		for i, c := range cols {
			cells[i] = fmt.Sprintf(format, value(c))
		}
		fmt.Fprintf(&md, "| %s | %s |\n", name, strings.Join(cells, " | "))
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if !strings.HasPrefix(k, "request ") {
			continue
		}
		if slices.ContainsFunc(cols, func(c costs) bool { return c[k] >= 0.005 }) {
			row(strings.TrimPrefix(k, "request "), func(c costs) float64 { return c[k] }, "%.2f")
		}
	}
	row("**requests, total**", costs.total, "**%.2f**")
	row("kube-apiserver CPU (ms)", func(c costs) float64 { return 1000 * c["cpu kube-apiserver"] }, "%.2f")
	row("kube-controller-manager CPU (ms)", func(c costs) float64 { return 1000 * c["cpu kube-controller-manager"] }, "%.2f")
	row("Deployment syncs queued", func(c costs) float64 { return c["syncs deployment"] }, "%.2f")
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if strings.HasPrefix(k, "loopback ") && slices.ContainsFunc(cols, func(c costs) bool { return c[k] >= 0.005 }) {
			row("kube-apiserver loopback "+strings.TrimPrefix(k, "loopback "), func(c costs) float64 { return c[k] }, "%.2f")
		}
	}
	row("etcd writes", func(c costs) float64 { return c["etcd puts"] }, "%.2f")
	row("etcd bytes written (KiB)", func(c costs) float64 { return c["etcd put bytes"] / 1024 }, "%.1f")
	return md.String()
}

// pathTable returns, for edits of two kinds, the requests that each edit makes and their mean time
// in the API server (admission included), by verb and resource, as Markdown.
func pathTable(title string, names []string, cols []costs) string {
	keys := map[string]bool{}
	for _, c := range cols {
		for k := range c.requestsByVerb() {
			keys[k] = true
		}
	}
	var md strings.Builder
	fmt.Fprintf(&md, "\n%s\n\n| verb resource |", title)
	for _, n := range names {
		fmt.Fprintf(&md, " %s: requests | mean ms |", n)
	}
	fmt.Fprintf(&md, "\n|---|%s\n", strings.Repeat("---|---|", len(names)))
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if strings.HasPrefix(k, "WATCH") || !slices.ContainsFunc(cols, func(c costs) bool { return c.requestsByVerb()[k] >= 0.05 }) {
			continue
		}
		fmt.Fprintf(&md, "| %s |", k)
		for _, c := range cols {
			n := c.requestsByVerb()[k]
			mean := "-"
			if n > 0 {
				mean = fmt.Sprintf("%.1f", 1000*c["time "+k]/n)
			}
			fmt.Fprintf(&md, " %.2f | %s |", n, mean)
		}
		md.WriteString("\n")
	}
	return md.String()
}
