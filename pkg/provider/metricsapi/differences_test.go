package metricsapi

import (
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/metrics/pkg/apis/custom_metrics"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"
)

// TestDeliberateDifferencesFromPrometheusAdapter has one case per row of docs/migrating-from-prometheus-adapter.md's table of
// deliberate differences ("Migrating from prometheus-adapter"). Each case states what
// prometheus-adapter answers (read from its source: pkg/custom-provider and pkg/naming) and
// checks what podpilot answers instead.
func TestDeliberateDifferencesFromPrometheusAdapter(t *testing.T) {
	ts := testNow.Add(-7 * time.Second)
	objs := []runtime.Object{
		pod("ns", "p1", map[string]string{"app": "a"}),
		pod("ns", "p2", map[string]string{"app": "b.c"}),
	}
	tests := []struct {
		name string
		// adapter is prometheus-adapter's answer for the same request, for the record.
		adapter string
		// rules is the rule file; empty means the default rules.
		rules string
		// call makes the request against a provider serving the seed.
		call     func(p *Provider) (any, error)
		query    func(string) (model.Vector, error)
		wantCode int
		// inQuery and notInQuery are checked against the one query made.
		inQuery, notInQuery []string
		check               func(t *testing.T, got any)
	}{
		{
			name:    "pods/* without a selector is one query for the namespace, filtered by the pods that exist",
			adapter: "LISTs the pods through the API server on every request and queries pod=~\"p1|p2|...\" with every name, unbounded",
			call: func(p *Provider) (any, error) {
				return p.GetMetricBySelector(t.Context(), "ns", labels.Everything(), qpsPod, labels.Everything())
			},
			query:    answer(model.Vector{sample(1, ts, "pod", "p1"), sample(2, ts, "pod", "gone")}, nil),
			wantCode: http.StatusOK,
			inQuery:  []string{`pod!=""`, `namespace="ns"`}, notInQuery: []string{"p1"},
			check: func(t *testing.T, got any) {
				if l := got.(*custom_metrics.MetricValueList); len(l.Items) != 1 || l.Items[0].DescribedObject.Name != "p1" {
					t.Errorf("items = %+v, want only the existing pod p1", l.Items)
				}
			},
		},
		{
			name:    "a NaN sample is no data: 404, not a value",
			adapter: "serves 0 for a NaN sample (metricFor), which an HPA reads as real zero load",
			call: func(p *Provider) (any, error) {
				return p.GetMetricBySelector(t.Context(), "ns", labels.SelectorFromSet(labels.Set{"app": "a"}), qpsPod, labels.Everything())
			},
			query:    answer(model.Vector{sample(math.NaN(), ts, "pod", "p1")}, nil),
			wantCode: http.StatusNotFound,
		},
		{
			name:    "a value carries its sample's timestamp",
			adapter: "stamps every value with time.Now(), hiding how old the sample is",
			call: func(p *Provider) (any, error) {
				return p.GetMetricBySelector(t.Context(), "ns", labels.SelectorFromSet(labels.Set{"app": "a"}), qpsPod, labels.Everything())
			},
			query:    answer(model.Vector{sample(1, ts, "pod", "p1")}, nil),
			wantCode: http.StatusOK,
			check: func(t *testing.T, got any) {
				l := got.(*custom_metrics.MetricValueList)
				if !l.Items[0].Timestamp.Time.Equal(ts) {
					t.Errorf("timestamp = %s, want the sample's %s", l.Items[0].Timestamp.Time, ts)
				}
			},
		},
		{
			name:    "gt and lt in a metric selector are a 400 naming the operator",
			adapter: "fails to build the query and answers 500",
			call: func(p *Provider) (any, error) {
				sel, err := labels.Parse("zone>1")
				if err != nil {
					return nil, err
				}
				return p.GetMetricBySelector(t.Context(), "ns", labels.Everything(), qpsPod, sel)
			},
			wantCode: http.StatusBadRequest,
		},
		{
			name:    "selector values are escaped for PromQL regexes and strings",
			adapter: "joins in/notin values and object names into =~ raw, so b.c also matches bxc and a quote breaks the query",
			call: func(p *Provider) (any, error) {
				sel, err := labels.Parse("zone in (b.c,d)")
				if err != nil {
					return nil, err
				}
				return p.GetMetricBySelector(t.Context(), "ns", labels.SelectorFromSet(labels.Set{"app": "b.c"}), qpsPod, sel)
			},
			query:    answer(model.Vector{sample(1, ts, "pod", "p2")}, nil),
			wantCode: http.StatusOK,
			inQuery:  []string{`b\\.c`},
		},
		{
			name:    "an external rule whose resources map nothing still matches the request's namespace",
			adapter: "adds the namespace matcher only when the rule's resources map the namespace label",
			rules: `externalRules:
- seriesQuery: '{namespace!=""}'
  name: {matches: '^(.+)_queries_total$', as: '${1}_qps'}
  metricsQuery: sum(rate(<<.Series>>{<<.LabelMatchers>>}[1m]))
`,
			call: func(p *Provider) (any, error) {
				return p.GetExternalMetric(t.Context(), "ns", labels.Everything(), provider.ExternalMetricInfo{Metric: "zdns_vanguard_qps"})
			},
			query:    answer(model.Vector{sample(1, ts)}, nil),
			wantCode: http.StatusOK,
			inQuery:  []string{`namespace="ns"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prom := &fakeProm{series: seedSeries(), query: tt.query}
			path := ""
			if tt.rules != "" {
				path = rulesFile(t, tt.rules)
			}
			p := servingProvider(t, prom, path, objs...)
			got, err := tt.call(p)
			checkStatus(t, err, tt.wantCode)
			if len(tt.inQuery)+len(tt.notInQuery) > 0 {
				if len(prom.queries) != 1 {
					t.Fatalf("queries = %q, want one (prometheus-adapter: %s)", prom.queries, tt.adapter)
				}
				for _, s := range tt.inQuery {
					if !strings.Contains(prom.queries[0], s) {
						t.Errorf("query %q does not contain %q (prometheus-adapter: %s)", prom.queries[0], s, tt.adapter)
					}
				}
				for _, s := range tt.notInQuery {
					if strings.Contains(prom.queries[0], s) {
						t.Errorf("query %q contains %q (prometheus-adapter: %s)", prom.queries[0], s, tt.adapter)
					}
				}
			}
			if tt.check != nil && err == nil {
				tt.check(t, got)
			}
		})
	}
}
