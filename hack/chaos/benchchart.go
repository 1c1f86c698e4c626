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
	"fmt"
	"math"
	"sort"
	"strings"
)

// series is one line of a latency panel: its label, colour and samples (seconds).
type series struct {
	label, color string
	values       []float64
}

// bar is one bar of the fan-out panel.
type bar struct {
	label, color string
	value        float64
}

const (
	panelW, panelH = 360, 260
	marginL        = 50
	marginB        = 40
	marginT        = 30
)

// chartSVG draws the latency distributions of P3 (one cumulative-distribution panel per kind) and
// the fan-out times of P5 (bars) side by side, as an SVG a browser shows.
func chartSVG(latency map[string][]series, kinds []string, fanout []bar, fanoutTitle string) string {
	var b strings.Builder
	width := (len(kinds) + 1) * (panelW + 20)
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">`+"\n", width, panelH+110)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	for i, kind := range kinds {
		cdfPanel(&b, float64(i*(panelW+20)), "P3 "+kind+": edit → new revision (CDF)", latency[kind])
	}
	barPanel(&b, float64(len(kinds)*(panelW+20)), fanoutTitle, fanout)
	// One legend for the latency panels.
	if len(kinds) > 0 {
		for j, s := range latency[kinds[0]] {
			y := panelH + 55 + 16*j
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="12" height="3" fill="%s"/><text x="%d" y="%d">%s</text>`+"\n", marginL, y, s.color, marginL+18, y+4, esc(s.label))
		}
	}
	b.WriteString("</svg>\n")
	return b.String()
}

func cdfPanel(b *strings.Builder, x0 float64, title string, ss []series) {
	maxV := 0.0
	for _, s := range ss {
		for _, v := range s.values {
			maxV = math.Max(maxV, v)
		}
	}
	maxV = niceCeil(maxV)
	plotW, plotH := float64(panelW-marginL-10), float64(panelH-marginT-marginB)
	axes(b, x0, title, plotW, plotH, fmt.Sprintf("seconds (0 – %g)", maxV), "fraction of edits")
	for _, s := range ss {
		if len(s.values) == 0 {
			continue
		}
		v := append([]float64(nil), s.values...)
		sort.Float64s(v)
		var pts []string
		for i, x := range v {
			px := x0 + marginL + x/maxV*plotW
			pts = append(pts, fmt.Sprintf("%.1f,%.1f %.1f,%.1f", px, marginT+plotH*(1-float64(i)/float64(len(v))), px, marginT+plotH*(1-float64(i+1)/float64(len(v)))))
		}
		fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", s.color, strings.Join(pts, " "))
	}
}

func barPanel(b *strings.Builder, x0 float64, title string, bars []bar) {
	maxV := 0.0
	for _, br := range bars {
		maxV = math.Max(maxV, br.value)
	}
	maxV = niceCeil(maxV)
	plotW, plotH := float64(panelW-marginL-10), float64(panelH-marginT-marginB)
	axes(b, x0, title, plotW, plotH, "", fmt.Sprintf("seconds (0 – %g)", maxV))
	w := plotW / float64(2*len(bars)+1)
	for i, br := range bars {
		h := br.value / maxV * plotH
		x := x0 + marginL + w*float64(2*i+1)
		fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>`+"\n", x, marginT+plotH-h, w, h, br.color)
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle">%.1f</text>`+"\n", x+w/2, marginT+plotH-h-4, br.value)
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", x+w/2, marginT+plotH+14+float64(i%2)*12, esc(br.label))
	}
}

func axes(b *strings.Builder, x0 float64, title string, plotW, plotH float64, xLabel, yLabel string) {
	fmt.Fprintf(b, `<text x="%.1f" y="18" font-weight="bold">%s</text>`+"\n", x0+marginL, esc(title))
	fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%.1f" stroke="black"/>`+"\n", x0+marginL, marginT, x0+marginL, marginT+plotH)
	fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black"/>`+"\n", x0+marginL, marginT+plotH, x0+marginL+plotW, marginT+plotH)
	if xLabel != "" {
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", x0+marginL+plotW/2, marginT+plotH+30, esc(xLabel))
	}
	fmt.Fprintf(b, `<text transform="translate(%.1f,%.1f) rotate(-90)" text-anchor="middle">%s</text>`+"\n", x0+14, marginT+plotH/2, esc(yLabel))
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

func esc(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
