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
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Two runs of the same series, bench and pairs are compared verdict by verdict; runs of another
// series, another bench, another number of pairs (of all scenarios, or of P3's image edits) or
// other rate limits are not.
func TestVerdictsAgainst(t *testing.T) {
	run := func(verdicts ...string) []benchResult {
		var rs []benchResult
		for i, v := range verdicts {
			rs = append(rs, benchResult{Scenario: string(rune('A' + i)), Target: atMostRatio(1.1), Verdict: v})
		}
		return append(rs, benchResult{Scenario: "no target"})
	}
	st := &stamp{Series: "s1", Tree: "t1", Repo: "r1", Pairs: 8, RateLimits: "default"}
	prev := &previousRun{Stamp: stamp{Date: "d", Series: "s1", Repo: "r1", Pairs: 8, RateLimits: "default"}, Results: run(verdictMet, verdictMissed, verdictUndecided)}

	got := verdictsAgainst(prev, st, run(verdictMet, verdictMissed, verdictMet))
	if !strings.Contains(got, "**2 of 3 the same**, 0 contradicting") || strings.Count(got, "**differs**: decided in one run") != 1 || strings.Contains(got, "no target") {
		t.Errorf("verdictsAgainst:\n%s\nwant 2 of 3 the same, one row decided in one run only, no row without a target", got)
	}
	got = verdictsAgainst(prev, st, run(verdictMissed, verdictMet, verdictUndecided))
	if !strings.Contains(got, "**1 of 3 the same**, 2 contradicting") || strings.Count(got, "**contradicts**") != 2 {
		t.Errorf("met against missed:\n%s\nwant 1 of 3 the same, 2 rows that contradict", got)
	}
	if got := verdictsAgainst(prev, st, run(verdictMet, verdictMissed, verdictUndecided)); !strings.Contains(got, "**3 of 3 the same**") {
		t.Errorf("the same verdicts: got\n%s", got)
	}
	for name, other := range map[string]stamp{
		"another series":               {Series: "s2", Tree: "t2", Repo: "r1", Pairs: 8, RateLimits: "default"},
		"another series, tree unknown": {Series: "s2", Repo: "r1", Pairs: 8, RateLimits: "default"},
		"another bench":                {Series: "s1", Repo: "r0", Pairs: 8, RateLimits: "default"},
		"another pair count":           {Series: "s1", Repo: "r1", Pairs: 5, RateLimits: "default"},
		"P3's image edits in pairs":    {Series: "s1", Repo: "r1", Pairs: 8, LatencyPairs: 10, RateLimits: "default"},
		"other rate limits":            {Series: "s1", Repo: "r1", Pairs: 8, RateLimits: "lifted"},
	} {
		if got := verdictsAgainst(&previousRun{Stamp: other, Results: prev.Results}, st, run(verdictMet)); got != "" {
			t.Errorf("%s: got\n%s\nwant nothing", name, got)
		}
	}
	// The same patches committed by make tree on another machine: another commit, the same tree.
	elsewhere := &previousRun{Stamp: stamp{Series: "s9", Tree: "t1", Repo: "r1", Pairs: 8, RateLimits: "default"}, Results: prev.Results}
	if got := verdictsAgainst(elsewhere, st, run(verdictMet, verdictMissed, verdictUndecided)); !strings.Contains(got, "**3 of 3 the same**") {
		t.Errorf("the same tree, another commit: got\n%s", got)
	}
	dirty := &stamp{Series: "s1", Tree: "t1", Repo: "r1-dirty", Pairs: 8, RateLimits: "default"}
	if got := verdictsAgainst(&previousRun{Stamp: *dirty, Results: prev.Results}, dirty, run(verdictMet)); got != "" {
		t.Errorf("uncommitted bench: got\n%s\nwant nothing", got)
	}
	if got := verdictsAgainst(nil, st, run(verdictMet)); got != "" {
		t.Errorf("no previous run: got %q", got)
	}
}

// A previous run is read back from the JSON that saveTable writes; a missing one is no error.
func TestReadPreviousRun(t *testing.T) {
	dir := t.TempDir()
	if prev, err := readPreviousRun(filepath.Join(dir, "none.json")); prev != nil || err != nil {
		t.Fatalf("missing file: %v, %v", prev, err)
	}
	path := filepath.Join(dir, "bench-small.json")
	if err := os.WriteFile(path, []byte(`{"stamp":{"seriesCommit":"s1","pairs":8},"results":[{"scenario":"A","verdict":"met","target":{"maxRatio":1.1}}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	prev, err := readPreviousRun(path)
	if err != nil || prev.Stamp.Series != "s1" || prev.Stamp.Pairs != 8 || len(prev.Results) != 1 || prev.Results[0].Verdict != verdictMet {
		t.Fatalf("readPreviousRun = %+v, %v", prev, err)
	}
}

// The stamp names the pairs of P3's image edits when they have their own, in a form that
// hack/bench-summary.sh reads.
func TestStampPairs(t *testing.T) {
	for _, tc := range []struct {
		st   stamp
		want string
	}{
		{stamp{Scale: "full", Pairs: 3}, "BENCH_SCALE=full, 3 pairs, client rate limits"},
		{stamp{Scale: "small", Pairs: 3, LatencyPairs: 10}, "BENCH_SCALE=small, 3 pairs + 10 of P3's image edits, client rate limits"},
	} {
		if got := tc.st.String(); !strings.Contains(got, tc.want) {
			t.Errorf("%+v: got %q, want it to contain %q", tc.st, got, tc.want)
		}
	}
}
