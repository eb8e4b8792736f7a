package rules

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/podpilot/podpilot/pkg/podcache/podcachetest"
)

func benchRules(b *testing.B) *RuleSet {
	b.Helper()
	set, err := Compile(Default(), StaticMapper(), Limits{})
	if err != nil {
		b.Fatal(err)
	}
	return set
}

// BenchmarkRuleQuery renders a custom rule's metricsQuery template for a pods request: by name
// for 1 and 100 pods, and the whole-namespace form the shared queries use.
func BenchmarkRuleQuery(b *testing.B) {
	rule := benchRules(b).Custom[0]
	sel, err := labels.Parse("zone in (eu,us),!canary")
	if err != nil {
		b.Fatal(err)
	}
	cases := []struct {
		name string
		req  ObjectRequest
	}{
		{"pods=1", ObjectRequest{Names: podNames(1)}},
		{"pods=100", ObjectRequest{Names: podNames(100)}},
		{"all-objects", ObjectRequest{AllObjects: true}},
		{"all-objects-with-selector", ObjectRequest{AllObjects: true, Selector: sel}},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			req := tc.req
			req.Series, req.Resource, req.Namespace = "zdns_vanguard_queries_total", podsGR, "bench"
			b.ReportAllocs()
			for b.Loop() {
				if _, err := rule.Query(req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSelectorMatchers turns a metric label selector into PromQL matchers.
func BenchmarkSelectorMatchers(b *testing.B) {
	for _, s := range []string{"zone=eu", "zone=eu,tier in (web,api,batch),!canary,shard"} {
		sel, err := labels.Parse(s)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("requirements=%d", len(mustRequirements(sel))), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := SelectorMatchers(sel); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkNamesMatcher builds the anchored alternation matching 100 and 1,000 pod names.
func BenchmarkNamesMatcher(b *testing.B) {
	for _, n := range []int{100, 1000} {
		names := podNames(n)
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := namesMatcher("pod", names, false); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func podNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("web-7d9f8c6b5-%05d", i)
	}
	return names
}

func mustRequirements(sel labels.Selector) labels.Requirements {
	reqs, _ := sel.Requirements()
	return reqs
}

// BenchmarkQueryChunks renders the queries of a 5,000-pod Deployment under the default limit,
// split by name, and reports how many and the longest.
func BenchmarkQueryChunks(b *testing.B) {
	rule := benchRules(b).Custom[0]
	req := ObjectRequest{Series: "zdns_vanguard_queries_total", Resource: podsGR, Namespace: "bench", Names: podcachetest.DeploymentPodNames(5000)}
	b.ReportAllocs()
	var queries []string
	for b.Loop() {
		var err error
		if queries, err = rule.QueryChunks(req); err != nil {
			b.Fatal(err)
		}
	}
	longest := 0
	for _, q := range queries {
		longest = max(longest, len(q))
	}
	b.ReportMetric(float64(len(queries)), "queries")
	b.ReportMetric(float64(longest), "longest-bytes")
}
