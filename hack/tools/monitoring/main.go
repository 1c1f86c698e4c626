// Command monitoring checks the alert rules and the dashboard of monitoring/ against the metrics
// that the series defines (hack/test-monitoring.sh, part of make test):
//
//	go run ./hack/tools/monitoring <metrics.go> <alerts.yaml> <dashboard.json> <rules-out.yaml>
//
// Every workload_config_snapshot_* metric and every label that the rules and the dashboard's
// queries name must be one that metrics.go defines (a renamed metric or label would leave an
// alert that never fires); and it writes the dashboard's queries as recording rules to
// rules-out.yaml, for promtool check rules to parse them.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
)

const prefix = "workload_config_snapshot_"

var (
	metricName   = regexp.MustCompile(`\bworkload_config_snapshot_[a-z_]+`)
	definedName  = regexp.MustCompile(`(?:Name:\s+|BuildFQName\("", Subsystem, )"([a-z_]+)"`)
	labelList    = regexp.MustCompile(`\[\]string\{([^}]*)\}`)
	quoted       = regexp.MustCompile(`"([a-z_]+)"`)
	grouping     = regexp.MustCompile(`\b(?:by|on|without|ignoring)\s*\(([^)]*)\)`)
	matcher      = regexp.MustCompile(`\b([a-z_]+)\s*(?:=~|!~|!=|=)\s*"`)
	templateName = regexp.MustCompile(`\$labels\.([a-z_]+)`)
)

func main() {
	if len(os.Args) != 5 {
		fail("usage: monitoring <metrics.go> <alerts.yaml> <dashboard.json> <rules-out.yaml>")
	}
	metrics, labels := defined(read(os.Args[1]))
	exprs, err := dashboardQueries(read(os.Args[3]))
	if err != nil {
		fail(err.Error())
	}
	var problems []string
	problems = append(problems, check("alerts.yaml", read(os.Args[2]), metrics, labels)...)
	for _, e := range exprs {
		problems = append(problems, check("dashboard.json", e, metrics, labels)...)
	}
	if len(problems) > 0 {
		fail(strings.Join(problems, "\n"))
	}
	if err := os.WriteFile(os.Args[4], []byte(recordingRules(exprs)), 0o644); err != nil {
		fail(err.Error())
	}
}

// defined returns the metric names (histograms with their series' suffixes) and the label names
// of metrics.go, with the labels that Prometheus adds (instance, job; cluster, which the scrape
// configurations of monitoring/scrape/ add) or a histogram has.
func defined(src string) (metrics, labels map[string]bool) {
	metrics = map[string]bool{}
	for _, m := range definedName.FindAllStringSubmatch(src, -1) {
		for _, suffix := range []string{"", "_bucket", "_sum", "_count"} {
			metrics[prefix+m[1]+suffix] = true
		}
	}
	labels = map[string]bool{"le": true, "instance": true, "job": true, "cluster": true}
	for _, l := range labelList.FindAllStringSubmatch(src, -1) {
		for _, q := range quoted.FindAllStringSubmatch(l[1], -1) {
			labels[q[1]] = true
		}
	}
	return metrics, labels
}

// check returns what text names that metrics.go does not define.
func check(where, text string, metrics, labels map[string]bool) []string {
	var out []string
	for _, m := range metricName.FindAllString(text, -1) {
		if !metrics[m] {
			out = append(out, fmt.Sprintf("%s: metric %s is not defined", where, m))
		}
	}
	var names []string
	for _, g := range grouping.FindAllStringSubmatch(text, -1) {
		for _, n := range strings.Split(g[1], ",") {
			names = append(names, strings.TrimSpace(n))
		}
	}
	for _, re := range []*regexp.Regexp{matcher, templateName} {
		for _, m := range re.FindAllStringSubmatch(text, -1) {
			names = append(names, m[1])
		}
	}
	for _, n := range names {
		if n != "" && !labels[n] {
			out = append(out, fmt.Sprintf("%s: label %s is not defined", where, n))
		}
	}
	return out
}

// dashboardQueries returns the query of every panel target of a Grafana dashboard.
func dashboardQueries(src string) ([]string, error) {
	var d struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal([]byte(src), &d); err != nil {
		return nil, fmt.Errorf("dashboard.json: %w", err)
	}
	var out []string
	for _, p := range d.Panels {
		if len(p.Targets) == 0 {
			return nil, fmt.Errorf("dashboard.json: panel %q has no query", p.Title)
		}
		for _, t := range p.Targets {
			out = append(out, t.Expr)
		}
	}
	sort.Strings(out)
	return out, nil
}

// recordingRules returns a rules file with one recording rule per query; Grafana's
// $__rate_interval becomes 5m.
func recordingRules(exprs []string) string {
	var b strings.Builder
	b.WriteString("groups:\n  - name: dashboard-queries\n    rules:\n")
	for i, e := range exprs {
		q, _ := json.Marshal(strings.ReplaceAll(e, "$__rate_interval", "5m"))
		fmt.Fprintf(&b, "      - record: dashboard:query_%d\n        expr: %s\n", i, q)
	}
	return b.String()
}

func read(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		fail(err.Error())
	}
	return string(b)
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, msg)
	os.Exit(1)
}
