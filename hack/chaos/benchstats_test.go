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

import "testing"

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
