package rules

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	pmodel "github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/podpilot/podpilot/pkg/podcache/podcachetest"
)

// podNameRE finds podcachetest.DeploymentPodNames' names in a query.
var podNameRE = regexp.MustCompile(`web-7d9f8c6b5d-[a-z0-9]{5}`)

// splitTestRule compiles one custom rule on pods with metricsQuery query under limit.
func splitTestRule(t *testing.T, query string, limit int) *Rule {
	t.Helper()
	cfg := &Config{Rules: []DiscoveryRule{{
		SeriesQuery:  `{namespace!="",pod!=""}`,
		Resources:    ResourceMapping{Template: "<<.Resource>>"},
		MetricsQuery: query,
	}}}
	set, err := Compile(cfg, StaticMapper(), Limits{MaxQueryBytes: limit})
	if err != nil {
		t.Fatal(err)
	}
	return set.Custom[0]
}

func TestQueriesForManyObjectsAreSplitUnderTheLimit(t *testing.T) {
	pods := schema.GroupResource{Resource: "pods"}
	names := podcachetest.DeploymentPodNames(5000)
	tests := []struct {
		name  string
		query string
	}{
		{name: "the names of .LabelMatchers are split",
			query: `sum(rate(<<.Series>>{<<.LabelMatchers>>}[2m])) by (<<.GroupBy>>)`},
		{name: "the names of .LabelValuesByName are split when they only restrict a selector",
			query: `sum(rate(<<.Series>>{namespace="<<index .LabelValuesByName "namespace">>",pod=~"<<index .LabelValuesByName "pod">>"}[2m])) by (pod)`},
		{name: "names used twice are split alike",
			query: `sum(rate(<<.Series>>{<<.LabelMatchers>>,code=~"5.."}[1m])) by (pod) / sum(rate(<<.Series>>{pod=~"<<.LabelValuesByName.pod>>"}[1m])) by (pod)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rule := splitTestRule(t, tt.query, DefaultMaxQueryBytes)
			req := ObjectRequest{Series: "http_requests_total", Resource: pods, Namespace: "shop", Names: names}
			queries, err := rule.QueryChunks(req)
			if err != nil {
				t.Fatal(err)
			}
			unbounded := splitTestRule(t, tt.query, 1<<30)
			whole, err := unbounded.Query(req)
			if err != nil {
				t.Fatal(err)
			}
			longest := 0
			for _, q := range queries {
				longest = max(longest, len(q))
				if len(q) > DefaultMaxQueryBytes {
					t.Errorf("a query of %d bytes, over the limit of %d", len(q), DefaultMaxQueryBytes)
				}
			}
			t.Logf("5,000 pods: one query of %d bytes unsplit; %d queries, the longest %d bytes", len(whole), len(queries), longest)
			perQuery := len(podNameRE.FindAllString(whole, -1)) / len(names) // how often the template prints the names
			var each []string
			for _, q := range queries {
				found := podNameRE.FindAllString(q, -1)
				each = append(each, found[:len(found)/perQuery]...)
			}
			if !slices.Equal(each, names) {
				t.Errorf("the queries name %d pods, want each of the %d once, in order", len(each), len(names))
			}
			if fewest := (len(whole) + DefaultMaxQueryBytes - 1) / DefaultMaxQueryBytes; len(queries) > fewest+1 {
				t.Errorf("%d queries, want about %d: the chunks are not filled", len(queries), fewest)
			}
		})
	}
}

func TestQueriesThatCannotBeSplitAreRefusedNamingTheLimitAndTheRule(t *testing.T) {
	pods := schema.GroupResource{Resource: "pods"}
	names := podcachetest.DeploymentPodNames(5000)
	zones := make([]string, 300) // 300 × 61 bytes: more than 15 KiB
	for i := range zones {
		zones[i] = fmt.Sprintf("%060d", i)
	}
	hugeSelector := "zone in (" + strings.Join(zones, ",") + ")"
	tests := []struct {
		name  string
		query string
		names []string
		// selector is the metric label selector; empty selects everything.
		selector string
		// why is a fragment of the reason.
		why string
	}{
		{name: "an aggregation across the objects cannot be split",
			query: `sum(rate(<<.Series>>{<<.LabelMatchers>>}[2m]))`, names: names, why: "without by (pod) aggregates across"},
		{name: "names excluded with !~ cannot be split",
			query: `sum(<<.Series>>{pod!~"<<index .LabelValuesByName "pod">>"}) by (pod)`, names: names, why: "outside a selector's = or =~ matcher"},
		{name: "names outside a selector cannot be split",
			query: `label_replace(sum(<<.Series>>{<<.LabelMatchers>>}) by (pod), "x", "<<index .LabelValuesByName "pod">>", "", "")`,
			names: names, why: "outside a selector"},
		{name: "a metric selector too long for one object is refused, not split",
			query: `sum(<<.Series>>{<<.LabelMatchers>>}) by (pod)`, names: names, selector: hugeSelector,
			why: "even for one object"},
		{name: "a single object whose query is too long is refused",
			query: `sum(<<.Series>>{<<.LabelMatchers>>}) by (pod)`, names: []string{strings.Repeat("p", 16<<10)}, why: "more than the limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rule := splitTestRule(t, tt.query, DefaultMaxQueryBytes)
			qs, err := rule.QueryChunks(ObjectRequest{Series: "http_requests_total", Resource: pods, Namespace: "shop", Names: tt.names,
				Selector: mustSelector(t, tt.selector)})
			if !errors.Is(err, ErrQueryTooLarge) {
				t.Fatalf("QueryChunks = %d queries, err %v; want ErrQueryTooLarge", len(qs), err)
			}
			for _, want := range []string{tt.why, fmt.Sprintf("limit of %d (--metrics-max-query-bytes)", DefaultMaxQueryBytes), `seriesQuery "{namespace!=\"\",pod!=\"\"}"`} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err.Error(), want)
				}
			}
		})
	}
}

func TestResourceQueriesForManyPodsAreSplitUnderTheLimit(t *testing.T) {
	cfg := Default()
	mapping := ResourceMapping{Overrides: map[string]GroupResource{"node": {Resource: "node"}, "namespace": {Resource: "namespace"}, "pod": {Resource: "pod"}}}
	cfg.ResourceRules = &ResourceRules{
		Window: pmodel.Duration(3 * time.Minute),
		CPU: ResourceRule{
			ContainerQuery: `sum by (<<.GroupBy>>) (rate(container_cpu_usage_seconds_total{container!="",<<.LabelMatchers>>}[3m]))`,
			NodeQuery:      `sum by (<<.GroupBy>>) (rate(node_cpu_seconds_total{mode!="idle",<<.LabelMatchers>>}[3m]))`,
			Resources:      mapping, ContainerLabel: "container",
		},
		Memory: ResourceRule{
			ContainerQuery: `sum by (<<.GroupBy>>) (container_memory_working_set_bytes{pod=~"<<index .LabelValuesByName "pod">>"})`,
			NodeQuery:      `sum by (<<.GroupBy>>) (node_memory_working_set_bytes{<<.LabelMatchers>>})`,
			Resources:      mapping, ContainerLabel: "container",
		},
	}
	set, err := Compile(cfg, StaticMapper(), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	names := podcachetest.DeploymentPodNames(5000)
	for _, rq := range []*ResourceQuery{set.Resource.CPU, set.Resource.Memory} {
		qs, err := rq.ContainerQueryChunks(ObjectRequest{Resource: schema.GroupResource{Resource: "pods"}, Namespace: "shop", Names: names})
		if err != nil {
			t.Fatal(err)
		}
		var each []string
		for _, q := range qs {
			if len(q) > DefaultMaxQueryBytes {
				t.Errorf("a query of %d bytes, over the limit of %d", len(q), DefaultMaxQueryBytes)
			}
			each = append(each, podNameRE.FindAllString(q, -1)...)
		}
		if len(qs) < 2 || !slices.Equal(each, names) {
			t.Errorf("%d queries name %d pods, want several naming each of the %d once, in order", len(qs), len(each), len(names))
		}
	}
}
