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
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// previousRun is what a run of the same scale left in <name>.json before this one.
type previousRun struct {
	Stamp   stamp         `json:"stamp"`
	Results []benchResult `json:"results"`
}

// readPreviousRun returns the run that path holds, or nil when there is none.
func readPreviousRun(path string) (*previousRun, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var prev previousRun
	if err := json.Unmarshal(raw, &prev); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &prev, nil
}

// verdictsAgainst compares the verdicts of results with those of prev, the previous run of the
// same scale, when both measured the same series (the same commit, or the same tree: the same
// patches committed on another machine) with the same bench (the same repository commit, neither
// with uncommitted changes) and the same numbers of pairs: a verdict that holds is the same in two
// consecutive runs. A row met in one run and missed in the other contradicts; one decided in one
// run and undecided in the other does not (its figure is within the runs' spread of its target).
// It returns "" when the runs are not comparable.
func verdictsAgainst(prev *previousRun, st *stamp, results []benchResult) string {
	sameSeries := prev != nil && (prev.Stamp.Series == st.Series || prev.Stamp.Tree != "" && prev.Stamp.Tree == st.Tree)
	sameBench := prev != nil && prev.Stamp.Repo == st.Repo && !strings.HasSuffix(st.Repo, "-dirty")
	if !sameSeries || !sameBench || prev.Stamp.Pairs != st.Pairs || prev.Stamp.LatencyPairs != st.LatencyPairs || prev.Stamp.LatencyTwin != st.LatencyTwin || prev.Stamp.RateLimits != st.RateLimits {
		return ""
	}
	before := map[string]benchResult{}
	for _, r := range prev.Results {
		before[r.Scenario] = r
	}
	var b strings.Builder
	same, contradicting, judged := 0, 0, 0
	for _, r := range results {
		p, ok := before[r.Scenario]
		if r.Verdict == "" || !ok || p.Verdict == "" {
			continue
		}
		judged++
		mark := "same"
		switch {
		case p.Verdict == r.Verdict:
			same++
		case p.Verdict == verdictUndecided || r.Verdict == verdictUndecided:
			mark = "**differs**: decided in one run"
		default:
			contradicting++
			mark = "**contradicts**"
		}
		fmt.Fprintf(&b, "| %s | %s | %s (%s) | %s (%s) | %s |\n", r.Scenario, r.Target, verdictCell(p.Verdict), intervalString(p), verdictCell(r.Verdict), intervalString(r), mark)
	}
	if judged == 0 {
		return ""
	}
	return fmt.Sprintf("\nVerdicts against the previous run of this series and scale (%s, %d pairs): **%d of %d the same**, "+
		"%d contradicting (met in one run, missed in the other).\n\n"+
		"| scenario | target | previous run | this run | |\n|---|---|---|---|---|\n", prev.Stamp.Date, prev.Stamp.Pairs, same, judged, contradicting) + b.String()
}
