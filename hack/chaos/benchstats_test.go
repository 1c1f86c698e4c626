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
	"math"
	"testing"
)

// A target is met only when the whole interval of the median is on its side: a median under
// the limit whose pairs straddle it is undecided, and the same runs always judge the same.
func TestJudge(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values []float64
		limit  float64
		want   string
	}{
		{"five pairs under the limit", []float64{1.00, 1.01, 0.99, 1.02, 1.00}, 1.05, verdictMet},
		{"five pairs, one over: the range decides", []float64{1.00, 1.01, 0.99, 1.08, 1.00}, 1.05, verdictUndecided},
		{"five pairs over", []float64{1.20, 1.31, 1.19, 1.40, 1.25}, 1.05, verdictMissed},
		{"ten pairs, one outlier over: the bootstrap keeps the median under", []float64{1.00, 1.01, 0.99, 1.02, 1.00, 1.01, 0.98, 1.00, 1.01, 1.30}, 1.05, verdictMet},
		{"ten pairs around the limit", []float64{1.00, 1.10, 0.99, 1.12, 1.00, 1.09, 0.98, 1.11, 1.01, 1.10}, 1.05, verdictUndecided},
		// The two arrangements of the pairs differ (e.g. the side on the busier kube-apiserver
		// is slower): a resample keeps four of each, as the run had, so the median stays
		// between them; drawing six of one arrangement would put it at 1.10 or 0.99.
		{"eight pairs, two arrangements apart", []float64{1.10, 0.98, 1.11, 0.99, 1.09, 1.00, 1.10, 0.99}, 1.08, verdictMet},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, interval := judge(tc.values, tc.limit)
			if got != tc.want {
				t.Errorf("judge = %s (interval %v), want %s", got, interval, tc.want)
			}
			if again, _ := judge(tc.values, tc.limit); again != got {
				t.Errorf("judged %s, then %s: the same runs must give the same verdict", got, again)
			}
		})
	}
}

// The SLO's share over 5 s is bounded exactly: with none of n over, the upper bound is
// 1-(1-conf)^(1/n) (300 changes without a slow one show at most about 1%), with all over the
// lower bound is (1-conf)^(1/n), and the verdict follows the whole interval.
func TestBinomialInterval(t *testing.T) {
	for _, tc := range []struct {
		k, n           int
		wantLo, wantHi float64
		verdict        string
	}{
		{0, 300, 0, 1 - math.Pow(0.05, 1.0/300), verdictMet},
		{0, 100, 0, 1 - math.Pow(0.05, 1.0/100), verdictUndecided},
		{40, 40, math.Pow(0.05, 1.0/40), 1, verdictMissed},
		{1, 600, 0.0000855, 0.00788, verdictMet},
		{20, 600, 0.02220, 0.04807, verdictMissed},
	} {
		lo, hi := binomialInterval(tc.k, tc.n, 0.95)
		if math.Abs(lo-tc.wantLo) > 0.0002 || math.Abs(hi-tc.wantHi) > 0.0002 {
			t.Errorf("%d of %d: interval %.5f–%.5f, want %.5f–%.5f", tc.k, tc.n, lo, hi, tc.wantLo, tc.wantHi)
		}
		if got := sloVerdict(lo, hi); got != tc.verdict {
			t.Errorf("%d of %d: verdict %s, want %s", tc.k, tc.n, got, tc.verdict)
		}
	}
}
