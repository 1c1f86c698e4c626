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
	"slices"
	"testing"
)

// The watched edits of P3's pairs side by side take every other workload of each kind, the
// first of each included, also when a kind has an odd number of them.
func TestEveryOther(t *testing.T) {
	var ws []workload
	for _, kind := range benchKinds {
		for range 5 {
			ws = append(ws, workload{kind: kind})
		}
	}
	if got, want := everyOther(ws), []int{0, 2, 4, 5, 7, 9, 10, 12, 14}; !slices.Equal(got, want) {
		t.Errorf("everyOther = %v, want %v", got, want)
	}
}
