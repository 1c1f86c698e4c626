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
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Repeated runs: the bench measures stock and patched kube-controller-manager in pairs, in
// alternating order, and reports every figure and ratio as the median of the pairs with their
// range; each target is checked here, from the figures.
var (
	benchPairs  = flag.Int("bench-pairs", 5, "with -bench: stock/patched pairs, stock first in odd pairs and patched first in even ones")
	benchSeries = flag.String("bench-series", "", "with -bench: the commit of the series under test (the tree's HEAD), for the stamp")
	benchTree   = flag.String("bench-tree", "", "with -bench: the git tree id of the series under test (HEAD^{tree}: the build version's metadata), for the stamp")
	benchRepo   = flag.String("bench-repo", "", "with -bench: the repository's commit, for the stamp")
	benchScale  = flag.String("bench-scale", "", "with -bench: BENCH_SCALE, for the stamp")
)

// spread is the median of a figure over the runs, with its range.
type spread struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

func spreadOf(values []float64) spread {
	if len(values) == 0 {
		return spread{}
	}
	v := slices.Sorted(slices.Values(values))
	median := v[len(v)/2]
	if len(v)%2 == 0 {
		median = (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return spread{Median: median, Min: v[0], Max: v[len(v)-1]}
}

func (s spread) String() string { return s.format(figure) }

// ratioString prints a ratio with three decimals: a target of 1.02x is missed by 1.021.
func (s spread) ratioString() string {
	return s.format(func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) })
}

func (s spread) format(f func(float64) string) string {
	if s.Min == s.Max {
		return f(s.Median)
	}
	return fmt.Sprintf("%s (%s–%s)", f(s.Median), f(s.Min), f(s.Max))
}

// target is what a figure must be: a ratio to stock at most MaxRatio, a patched value at most
// MaxValue, or at most MaxMore more than stock's (none set: no target, the figure informs).
type target struct {
	MaxRatio float64  `json:"maxRatio,omitempty"`
	MaxValue *float64 `json:"maxValue,omitempty"`
	MaxMore  *float64 `json:"maxMore,omitempty"`
}

func atMostRatio(r float64) target { return target{MaxRatio: r} }
func atMost(v float64) target      { return target{MaxValue: &v} }
func atMostMore(v float64) target  { return target{MaxMore: &v} }

func (t target) String() string {
	switch {
	case t.MaxRatio > 0:
		return fmt.Sprintf("≤ %.2fx", t.MaxRatio)
	case t.MaxValue != nil:
		return "≤ " + figure(*t.MaxValue)
	case t.MaxMore != nil:
		return "≤ stock + " + figure(*t.MaxMore)
	}
	return "-"
}

// Verdicts of a figure against its target.
const (
	verdictMet       = "met"
	verdictMissed    = "missed"
	verdictUndecided = "undecided"
)

// bootstrapMinRuns is the number of pairs from which the interval of a median is a bootstrap;
// below it, the interval is the pairs' whole range.
const bootstrapMinRuns = 8

// medianInterval returns an interval of the median of values: with bootstrapMinRuns values or
// more, the 5th and 95th percentiles of the medians of 2,000 resamples (a percentile
// bootstrap, 90%; a fixed seed, so that the same runs always give the same interval); with
// fewer, the values' range, which a 90% interval of a median of so few runs is about as wide
// as anyway. values[i] comes from pair i, and the pairs alternate (alternate: which side runs
// first, or on which kube-apiserver): a resample takes the even pairs' values from the even
// pairs and the odd ones' from the odd pairs, so that it keeps the run's balance of the two
// arrangements, as the design does, instead of drawing six of one and two of the other.
func medianInterval(values []float64) (lo, hi float64) {
	if len(values) == 0 {
		return 0, 0
	}
	if len(values) < bootstrapMinRuns {
		s := spreadOf(values)
		return s.Min, s.Max
	}
	rng := rand.New(rand.NewPCG(1, 2))
	medians := make([]float64, 2000)
	resample := make([]float64, len(values))
	for i := range medians {
		for j := range resample {
			// A pair of j's parity: j%2, j%2+2, ... below len(values).
			resample[j] = values[j%2+2*rng.IntN((len(values)-j%2+1)/2)]
		}
		medians[i] = spreadOf(resample).Median
	}
	slices.Sort(medians)
	return medians[len(medians)*5/100], medians[len(medians)*95/100-1]
}

// judge says whether values, the pairs' figures compared with a target of at most limit,
// meet it: met when the whole interval of their median is at or below the limit, missed when
// it is all above, undecided when the limit falls inside (more pairs would tell).
func judge(values []float64, limit float64) (string, [2]float64) {
	lo, hi := medianInterval(values)
	switch {
	case hi <= limit:
		return verdictMet, [2]float64{lo, hi}
	case lo > limit:
		return verdictMissed, [2]float64{lo, hi}
	}
	return verdictUndecided, [2]float64{lo, hi}
}

// compare is one figure of both controller managers over the pairs: stock[i] and patched[i]
// come from pair i. The ratio's median is that of the pairs' ratios; the verdict is judge's,
// on the pairs' ratios, patched values or differences as the target says.
func compare(scenario, unit string, stock, patched []float64, t target, note string) benchResult {
	r := benchResult{Scenario: scenario, Unit: unit, Note: note, Target: t, StockRuns: stock, PatchedRuns: patched}
	r.StockSpread, r.PatchedSpread = spreadOf(stock), spreadOf(patched)
	r.Stock, r.Patched = r.StockSpread.Median, r.PatchedSpread.Median
	var ratios []float64
	for i := range min(len(stock), len(patched)) {
		if stock[i] > 0 {
			ratios = append(ratios, patched[i]/stock[i])
		}
	}
	if len(ratios) > 0 {
		s := spreadOf(ratios)
		r.Ratio = &s
	}
	switch {
	case t.MaxRatio > 0 && r.Ratio != nil:
		r.Verdict, r.Interval = judge(ratios, t.MaxRatio)
	case t.MaxValue != nil:
		r.Verdict, r.Interval = judge(patched, *t.MaxValue)
	case t.MaxMore != nil:
		var more []float64
		for i := range min(len(stock), len(patched)) {
			more = append(more, patched[i]-stock[i])
		}
		r.Verdict, r.Interval = judge(more, *t.MaxMore)
	}
	if r.Verdict != "" {
		met := r.Verdict == verdictMet
		r.Met = &met
	}
	return r
}

// stamp says what a bench run measured, where and when.
type stamp struct {
	Date   string `json:"date"`
	Series string `json:"seriesCommit"`
	// Tree is the series' git tree id, which the build's version carries: the same patches give
	// the same tree on every machine, where make tree's commits differ (their dates).
	Tree  string `json:"seriesTree,omitempty"`
	Repo  string `json:"repositoryCommit"`
	Scale string `json:"scale"`
	Pairs int    `json:"pairs"`
	// LatencyPairs is -bench-latency-pairs: P3's image edits in pairs of their own (0: in the
	// pairs of the other scenarios).
	LatencyPairs int `json:"latencyPairs,omitempty"`
	// LatencyTwin is -bench-twin: those pairs time stock's and the patched image edits side by
	// side, each on a kube-apiserver of its own.
	LatencyTwin bool `json:"latencyTwin,omitempty"`
	// RateLimits is "default" (the client-side rate limits of the command lines) or "lifted"
	// (-bench-unlimited).
	RateLimits string `json:"clientRateLimits"`
	Machine    struct {
		Cores     int     `json:"cores"`
		MemoryGiB float64 `json:"memoryGiB"`
		Kernel    string  `json:"kernel"`
	} `json:"machine"`
	// Flags holds each controller manager's command line, by mode.
	Flags map[string]string `json:"kubeControllerManagerFlags"`
	Took  string            `json:"took"`
}

func newStamp() *stamp {
	s := &stamp{Date: time.Now().UTC().Format(time.RFC3339), Series: *benchSeries, Tree: *benchTree, Repo: *benchRepo, Scale: *benchScale,
		Pairs: *benchPairs, LatencyPairs: *benchLatencyPairs, LatencyTwin: *benchTwin, RateLimits: map[bool]string{false: "default", true: "lifted"}[*benchUnlimited], Flags: map[string]string{}}
	s.Machine.Cores = runtime.NumCPU()
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		s.Machine.Kernel = strings.TrimSpace(string(b))
	}
	if f, err := os.Open("/proc/meminfo"); err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if fields := strings.Fields(sc.Text()); len(fields) >= 2 && fields[0] == "MemTotal:" {
				kib, _ := strconv.ParseFloat(fields[1], 64)
				s.Machine.MemoryGiB = kib / (1 << 20)
			}
		}
	}
	return s
}

// recordFlags records the command line that kube-controller-manager runs with now as mode's.
func (s *stamp) recordFlags(mode string) {
	if p := procs["kube-controller-manager"]; p != nil && len(p.args) > 0 {
		s.Flags[mode] = strings.Join(p.args[1:], " ")
	}
}

func (s *stamp) String() string {
	series := short(s.Series)
	if s.Tree != "" {
		series += ", tree " + short(s.Tree)
	}
	pairs := fmt.Sprintf("%d pairs", s.Pairs)
	if s.LatencyPairs > 0 {
		pairs += fmt.Sprintf(" + %d of P3's image edits", s.LatencyPairs)
		if s.LatencyTwin {
			pairs += " side by side"
		}
	}
	return fmt.Sprintf("%s, series %s (repository %s), BENCH_SCALE=%s, %s, client rate limits %s, %d cores, %.0f GiB, kernel %s, took %s",
		s.Date, series, short(s.Repo), s.Scale, pairs, s.RateLimits, s.Machine.Cores, s.Machine.MemoryGiB, s.Machine.Kernel, s.Took)
}

func short(commit string) string {
	if c, dirty := strings.CutSuffix(commit, "-dirty"); dirty {
		return short(c) + "-dirty"
	}
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}

// alternate returns the runs of a pair in the order they run: as given in even pairs (the
// first is 0), reversed in odd ones, so that neither side always runs first on a machine that
// warms up or fills up as the bench goes on.
func alternate[T any](pair int, order []T) []T {
	if pair%2 == 1 {
		order = slices.Clone(order)
		slices.Reverse(order)
	}
	return order
}
