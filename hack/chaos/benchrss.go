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

// BENCH_SCALE=rss: P2 alone, at full's size, followed by what kube-controller-manager's resident
// memory does once its garbage is collected: is the patched one's larger RSS memory it holds, or
// idle heap that the Go runtime has not returned to the OS yet?

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
)

var (
	benchRSSAfter   = flag.String("bench-rss-after", "60s,180s", "with -bench-scenarios rss: when, after the forced garbage collection, to read kube-controller-manager's memory again")
	benchGOMEMLIMIT = flag.String("bench-gomemlimit", "", "GOMEMLIMIT of both controller managers, e.g. 1GiB (BENCH_GOMEMLIMIT): the same soft memory limit on both sides")
)

// rssAfter returns -bench-rss-after's durations.
func rssAfter() ([]time.Duration, error) {
	var out []time.Duration
	for _, s := range strings.Split(*benchRSSAfter, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(s))
		if err != nil {
			return nil, fmt.Errorf("-bench-rss-after: %w", err)
		}
		out = append(out, d)
	}
	return out, nil
}

// setGOMEMLIMIT gives both controller managers -bench-gomemlimit, for their next start.
func setGOMEMLIMIT() {
	if *benchGOMEMLIMIT == "" {
		return
	}
	p := procs["kube-controller-manager"]
	env := p.env
	if env == nil {
		env = os.Environ()
	}
	p.env = append(slicesWithout(env, "GOMEMLIMIT="), "GOMEMLIMIT="+*benchGOMEMLIMIT)
}

// rssScenario is P2 (memoryScenario, whose reading of the Go heap forces a garbage collection),
// then VmRSS and RssAnon right after that collection and at each -bench-rss-after, and VmHWM.
// Meanwhile VmRSS and RssAnon are sampled every second into rss-<namespace>.csv of -bench-out.
func rssScenario(ctx context.Context, c, setup kubernetes.Interface, ns string, patched bool, f map[string]float64) error {
	after, err := rssAfter()
	if err != nil {
		return err
	}
	stop := sampleRSS(ns)
	defer stop()
	if err := memoryScenario(ctx, c, setup, ns, patched, f); err != nil {
		return err
	}
	collected := time.Now()
	// At each reading, what the Go runtime says it holds resident, without another collection:
	// heap spans in use, idle heap not returned to the OS, stacks and its own structures; the
	// rest of RssAnon is memory the runtime does not account for.
	read := func(key string) error {
		var err error
		if f["rss-"+key], err = kcmRSS(); err != nil {
			return err
		}
		if f["anon-"+key], err = kcmStatus("RssAnon:"); err != nil {
			return err
		}
		mem, err := kcmMemStats()
		if err != nil {
			return err
		}
		f["inuse-"+key] = mem["heap_inuse"]
		f["unreturned-"+key] = mem["heap_idle"] - mem["heap_released"]
		f["other-"+key] = mem["stack_inuse"] + mem["mspan_inuse"] + mem["mcache_inuse"] + mem["gc_sys"] + mem["buck_hash_sys"] + mem["other_sys"]
		f["unaccounted-"+key] = f["anon-"+key] - f["inuse-"+key] - f["unreturned-"+key] - f["other-"+key]
		return nil
	}
	if err := read("gc"); err != nil {
		return err
	}
	for _, d := range after {
		step(fmt.Sprintf("bench:   P2 memory %v after the forced garbage collection", d))
		time.Sleep(time.Until(collected.Add(d)))
		if err := read(d.String()); err != nil {
			return err
		}
	}
	f["rss-peak"], err = kcmPeakRSS()
	return err
}

// sampleRSS writes kube-controller-manager's VmRSS and RssAnon (MiB) every second to
// rss-<ns>.csv of -bench-out until the function it returns is called.
func sampleRSS(ns string) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		if *benchOut == "" {
			return
		}
		out, err := os.Create(filepath.Join(*benchOut, "rss-"+ns+".csv"))
		if err != nil {
			return
		}
		defer out.Close()
		fmt.Fprintln(out, "seconds,vmrss_mib,rssanon_mib")
		start := time.Now()
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			rss, err1 := kcmRSS()
			anon, err2 := kcmStatus("RssAnon:")
			if err1 == nil && err2 == nil {
				fmt.Fprintf(out, "%.0f,%.1f,%.1f\n", time.Since(start).Seconds(), rss, anon)
			}
		}
	}()
	return func() { close(done); <-finished }
}

// writeRSS writes BENCH_SCALE=rss's table: rss, or rss-gomemlimit with -bench-gomemlimit.
func writeRSS(col func(mode, key string) []float64, st *stamp) error {
	after, err := rssAfter()
	if err != nil {
		return err
	}
	limit := "no GOMEMLIMIT"
	if *benchGOMEMLIMIT != "" {
		limit = "GOMEMLIMIT=" + *benchGOMEMLIMIT + " on both sides"
	}
	what := fmt.Sprintf("%d Secrets + %d ConfigMaps of 12 KiB and %d opt-in workloads across the three kinds (P2 of full), %s", *benchSecrets, *benchSecrets, *benchOptIn, limit)
	last := after[len(after)-1].String()
	results := []benchResult{
		compare("RSS before the forced GC", "MiB", col("stock", "p2-rss"), col("patched", "p2-rss"), atMostRatio(1.05), "VmRSS as P2 reads it: "+what),
		compare("Go heap after the forced GC", "MiB", col("stock", "p2-heap"), col("patched", "p2-heap"), atMostRatio(1.02), "go_gc_heap_live_bytes after /debug/pprof/heap?gc=1: the objects its collection marked live (before 2026-12-03: go_memstats_heap_alloc_bytes)"),
	}
	keys := []string{"gc"}
	for _, d := range after {
		keys = append(keys, d.String())
	}
	for _, key := range keys {
		when, t := key+" after the GC", target{}
		switch key {
		case "gc":
			when = "right after the forced GC"
		case last:
			t = atMostRatio(1.05)
		}
		results = append(results,
			compare("RSS "+when, "MiB", col("stock", "rss-"+key), col("patched", "rss-"+key), t, "VmRSS, the controller manager idle meanwhile"),
			compare("RssAnon "+when, "MiB", col("stock", "anon-"+key), col("patched", "anon-"+key), t, "RssAnon of /proc/<pid>/status: anonymous memory, without the binary's pages"),
			compare("  of which heap spans in use", "MiB", col("stock", "inuse-"+key), col("patched", "inuse-"+key), target{}, "go_memstats_heap_inuse_bytes at the same moment (live objects and the free space of their spans)"),
			compare("  of which idle heap not returned", "MiB", col("stock", "unreturned-"+key), col("patched", "unreturned-"+key), target{}, "heap_idle - heap_released"),
			compare("  of which stacks and the runtime's structures", "MiB", col("stock", "other-"+key), col("patched", "other-"+key), target{}, "stack_inuse + mspan_inuse + mcache_inuse + gc_sys + buck_hash_sys + other_sys"),
			compare("  of which not accounted for by Go", "MiB", col("stock", "unaccounted-"+key), col("patched", "unaccounted-"+key), target{}, "RssAnon minus the three rows above"))
	}
	results = append(results, compare("peak RSS", "MiB", col("stock", "rss-peak"), col("patched", "rss-peak"), target{}, "VmHWM at the last reading; the 1 Hz series of each run is _output/bench/rss-<namespace>.csv"))
	name := "rss"
	if *benchGOMEMLIMIT != "" {
		name += "-gomemlimit"
	}
	return writeResults(name, results, "", st)
}
