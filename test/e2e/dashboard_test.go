package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/podpilot/podpilot/test/e2e/framework"
)

// dashboardExprs returns every PromQL expression of manifests/dashboards/podpilot.json:
// the panels' targets and the variables' label_values() selectors.
func dashboardExprs(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(framework.RepoRoot(), "manifests", "dashboards", "podpilot.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("dashboard: %v", err)
	}
	var out []string
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			out = append(out, tg.Expr)
		}
	}
	labelValues := regexp.MustCompile(`^label_values\((.+),\s*[a-zA-Z_]+\)$`)
	for _, v := range d.Templating.List {
		if m := labelValues.FindStringSubmatch(v.Definition); m != nil {
			out = append(out, m[1])
		}
	}
	return out
}

// grafanaVariables replaces the dashboard's variables by what Grafana would send.
var grafanaVariables = strings.NewReplacer("$__rate_interval", "1m", "$namespace", ".*", "$podautoscaler", ".*")

// promqlKeywords are the words of PromQL that are not metric names.
var promqlKeywords = map[string]bool{
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
	"bool": true, "and": true, "or": true, "unless": true, "offset": true, "inf": true, "nan": true,
}

// metricNames returns the metric names an expression selects: identifiers outside label
// matchers, strings, ranges and grouping lists, that are not functions or keywords. It is a
// tokenizer, not a parser; Prometheus checks that the expression parses.
func metricNames(expr string) []string {
	// Drop strings, label matchers, ranges, then grouping clauses.
	for _, re := range []*regexp.Regexp{
		regexp.MustCompile(`"(?:[^"\\]|\\.)*"`), regexp.MustCompile(`\{[^}]*\}`), regexp.MustCompile(`\[[^\]]*\]`),
		regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`),
	} {
		expr = re.ReplaceAllString(expr, " ")
	}
	var out []string
	ident := regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*(\s*\()?`)
	for _, m := range ident.FindAllString(expr, -1) {
		if strings.HasSuffix(m, "(") || promqlKeywords[strings.ToLower(m)] {
			continue
		}
		out = append(out, m)
	}
	return out
}

func TestMonitoringDashboardTokenizer(t *testing.T) {
	got := metricNames(`histogram_quantile(0.99, sum by (le, group) (rate(apiserver_request_duration_seconds_bucket{group=~"a|b"}[1m]))) / on (x) max(foo:bar) > bool 2`)
	if strings.Join(got, ",") != "apiserver_request_duration_seconds_bucket,foo:bar" {
		t.Errorf("metricNames = %q", got)
	}
}

// testDashboard checks every expression of the dashboard: the local
// Prometheus parses it (an instant query answers success), and each metric it
// names is on podpilot's /metrics in this run (s).
func testDashboard(t *testing.T, s scrape) {
	ctx := t.Context()
	prom := prometheusAPI(t)
	exposed := s.names()
	exprs := dashboardExprs(t)
	if len(exprs) == 0 {
		t.Fatal("the dashboard has no expressions")
	}
	used := map[string]bool{}
	for _, e := range exprs {
		q := grafanaVariables.Replace(e)
		if _, _, _, err := prom.Query(ctx, q, time.Time{}); err != nil {
			t.Errorf("Prometheus rejects %s: %v", q, err)
		}
		names := metricNames(q)
		if len(names) == 0 {
			t.Errorf("no metric in %s", q)
		}
		for _, n := range names {
			used[n] = true
			if !exposed[n] {
				t.Errorf("%s names %s, which podpilot's /metrics does not expose", e, n)
			}
		}
	}
	t.Logf("%d expressions over %d metrics: %s", len(exprs), len(used), strings.Join(sortedKeys(used), " "))
}
