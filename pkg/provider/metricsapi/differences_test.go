package metricsapi

import (
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/metrics/pkg/apis/custom_metrics"
	"k8s.io/metrics/pkg/apis/external_metrics"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"

	"github.com/podpilot/podpilot/pkg/provider/prometheus"
)

// TestDeliberateDifferencesFromPrometheusAdapter has one case per row of the table of deliberate
// differences in docs/migrating-from-prometheus-adapter.md that the custom and external metrics
// APIs answer. Each case states what prometheus-adapter v0.12.0 answers (read from its source:
// pkg/custom-provider, pkg/external-provider, pkg/naming) and checks what podpilot answers
// instead, with the options a user runs: answers shared for --metrics-query-cache-max-age.
func TestDeliberateDifferencesFromPrometheusAdapter(t *testing.T) {
	ts := testNow.Add(-7 * time.Second)
	objs := []runtime.Object{
		pod("ns", "p1", map[string]string{"app": "a"}),
		pod("ns", "p2", map[string]string{"app": "b.c"}),
	}
	bySelector := func(sel, metricSel string) func(p *Provider) (any, error) {
		return func(p *Provider) (any, error) {
			s, err := labels.Parse(sel)
			if err != nil {
				return nil, err
			}
			ms, err := labels.Parse(metricSel)
			if err != nil {
				return nil, err
			}
			return p.GetMetricBySelector(t.Context(), "ns", s, qpsPod, ms)
		}
	}
	external := func(metricSel string) func(p *Provider) (any, error) {
		return func(p *Provider) (any, error) {
			ms, err := labels.Parse(metricSel)
			if err != nil {
				return nil, err
			}
			return p.GetExternalMetric(t.Context(), "ns", ms, provider.ExternalMetricInfo{Metric: "zdns_vanguard_qps"})
		}
	}
	values := make([]string, 5000) // 5000 × 61 bytes: more than the default 15 KiB
	for i := range values {
		values[i] = fmt.Sprintf("%060d", i)
	}
	manyValues := strings.Join(values, ",")
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
		// wantMessage are fragments of the error message.
		wantMessage []string
		// inQuery and notInQuery are checked against the one query made.
		inQuery, notInQuery []string
		check               func(t *testing.T, got any)
	}{
		{
			name:     "pods/* without a selector is one query for the namespace, filtered by the pods that exist",
			adapter:  "LISTs the pods through the API server on every request and queries pod=~\"p1|p2|...\" with every name",
			call:     bySelector("", ""),
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
			name:    "requests share one query per namespace and metric: a GET by name and a selector, within the max age",
			adapter: "sends one query per request, each with its objects' names",
			call: func(p *Provider) (any, error) {
				if _, err := p.GetMetricByName(t.Context(), types.NamespacedName{Namespace: "ns", Name: "p1"}, qpsPod, labels.Everything()); err != nil {
					return nil, err
				}
				return bySelector("app=b.c", "")(p)
			},
			query:    answer(model.Vector{sample(1, ts, "pod", "p1"), sample(2, ts, "pod", "p2")}, nil),
			wantCode: http.StatusOK,
			inQuery:  []string{`pod!=""`},
			check: func(t *testing.T, got any) {
				if l := got.(*custom_metrics.MetricValueList); len(l.Items) != 1 || l.Items[0].DescribedObject.Name != "p2" {
					t.Errorf("items = %+v, want p2 from the shared answer", l.Items)
				}
			},
		},
		{
			name:    "a rule that is not separable is asked with the names even while answers are shared",
			adapter: "fills .LabelValuesByName with the requested names (TestSharingNeverChangesAnAnswer has every shape)",
			rules: `rules:
- seriesQuery: '{namespace!="",pod!=""}'
  resources: {overrides: {namespace: {resource: namespace}, pod: {resource: pod}}}
  name: {matches: '^(.*)_queries_total$', as: '${1}_qps'}
  metricsQuery: sum(rate(<<.Series>>{namespace="<<index .LabelValuesByName "namespace">>",pod=~"<<index .LabelValuesByName "pod">>"}[1m])) by (pod)
`,
			call:     bySelector("", ""),
			query:    answer(model.Vector{sample(1, ts, "pod", "p1")}, nil),
			wantCode: http.StatusOK,
			inQuery:  []string{`pod=~"p1|p2"`}, notInQuery: []string{`pod!=""`, `pod=~""`},
		},
		{
			name:     "a NaN sample is no data: 404, not a value",
			adapter:  "serves 0 for a NaN sample (metricFor), which an HPA reads as real zero load",
			call:     bySelector("app=a", ""),
			query:    answer(model.Vector{sample(math.NaN(), ts, "pod", "p1")}, nil),
			wantCode: http.StatusNotFound,
		},
		{
			name:     "an external NaN sample is no data: 404, not a value",
			adapter:  "converts it with int64(NaN*1000), which is -9223372036854775808m on amd64",
			call:     external(""),
			query:    answer(model.Vector{sample(math.NaN(), ts)}, nil),
			wantCode: http.StatusNotFound,
			inQuery:  []string{`namespace="ns"`},
		},
		{
			name:    "a GET by name of a pod that does not exist (deleted a moment ago) is a 404 without a query, as pods/* leaves it out",
			adapter: "queries the name and serves the deleted pod's series while they last",
			call: func(p *Provider) (any, error) {
				return p.GetMetricByName(t.Context(), types.NamespacedName{Namespace: "ns", Name: "gone"}, qpsPod, labels.Everything())
			},
			query:    answer(model.Vector{sample(1, ts, "pod", "gone")}, nil),
			wantCode: http.StatusNotFound,
		},
		{
			name:     "a custom pods/* request without samples is a 404, not an empty list",
			adapter:  "answers 200 with an empty list (metricsFor: the metric is known, no object has a value)",
			call:     bySelector("", ""),
			query:    answer(model.Vector{}, nil),
			wantCode: http.StatusNotFound,
			inQuery:  []string{`pod!=""`, `namespace="ns"`},
		},
		{
			name:     "an external metric without samples is a 404, as a custom metric without samples",
			adapter:  "answers 200 with an empty list",
			call:     external(""),
			query:    answer(model.Vector{}, nil),
			wantCode: http.StatusNotFound,
			inQuery:  []string{`namespace="ns"`},
		},
		{
			name:     "external values carry the sample's labels without __name__",
			adapter:  "copies every label, __name__ included, into metricLabels",
			call:     external(""),
			query:    answer(model.Vector{sample(1, ts, "__name__", "zdns_vanguard_queries_total", "zone", "a")}, nil),
			wantCode: http.StatusOK,
			check: func(t *testing.T, got any) {
				if l := got.(*external_metrics.ExternalMetricValueList); len(l.Items) != 1 || fmt.Sprint(l.Items[0].MetricLabels) != "map[zone:a]" {
					t.Errorf("items = %+v, want one value labelled zone=a only", l.Items)
				}
			},
		},
		{
			name:     "a custom value carries its sample's timestamp",
			adapter:  "stamps every custom value with time.Now(), hiding how old the sample is (external values carry the sample's)",
			call:     bySelector("app=a", ""),
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
			name:     "values are rounded to the nearest milli-unit",
			adapter:  "truncates with int64(v*1000): 0.0126 is 12m, and values past 9.2e15 overflow",
			call:     bySelector("app=a", ""),
			query:    answer(model.Vector{sample(0.0126, ts, "pod", "p1")}, nil),
			wantCode: http.StatusOK,
			check: func(t *testing.T, got any) {
				if v := got.(*custom_metrics.MetricValueList).Items[0].Value.String(); v != "13m" {
					t.Errorf("value = %s, want 13m (TestQuantity has the large values)", v)
				}
			},
		},
		{
			name:    "several samples for one object: the first, in answer order",
			adapter: "keeps the last (MatchValuesToNames overwrites by name)",
			call: func(p *Provider) (any, error) {
				return p.GetMetricByName(t.Context(), types.NamespacedName{Namespace: "ns", Name: "p1"}, qpsPod, labels.Everything())
			},
			query:    answer(model.Vector{sample(1, ts, "pod", "p1"), sample(2, ts, "pod", "p1")}, nil),
			wantCode: http.StatusOK,
			check: func(t *testing.T, got any) {
				if v := got.(*custom_metrics.MetricValue).Value.String(); v != "1" {
					t.Errorf("value = %s, want the first sample's 1", v)
				}
			},
		},
		{
			name:        "gt and lt in a custom metric selector are a 400 naming the operator",
			adapter:     "fails to build the query, which QueryForMetric reports as not found: 404",
			call:        bySelector("", "zone>1"),
			wantCode:    http.StatusBadRequest,
			wantMessage: []string{"unsupported label selector operator", `"zone"`},
		},
		{
			name:     "gt and lt in an external metric selector are a 400 naming the operator",
			adapter:  "fails to build the query: 500 \"unable to fetch metrics\"",
			call:     external("zone<1"),
			wantCode: http.StatusBadRequest,
		},
		{
			name:     "label names in a metric selector must be Prometheus label names: 400",
			adapter:  "passes app.kubernetes.io/name through into a query Prometheus rejects",
			call:     bySelector("", "app.kubernetes.io/name=x"),
			wantCode: http.StatusBadRequest,
		},
		{
			name:     "selector values are escaped for PromQL regexes and strings",
			adapter:  "joins in/notin values and object names into =~ raw, so b.c also matches bxc and a quote breaks the query",
			call:     bySelector("app=b.c", "zone in (b.c,d)"),
			query:    answer(model.Vector{sample(1, ts, "pod", "p2")}, nil),
			wantCode: http.StatusOK,
			inQuery:  []string{`zone=~"b\\.c|d"`},
		},
		{
			name:        "a query over --metrics-max-query-bytes is a 400 before anything is sent",
			adapter:     "sends a query of any size",
			call:        external("zone in (" + manyValues + ")"),
			wantCode:    http.StatusBadRequest,
			wantMessage: []string{"more than the limit of 15360 (--metrics-max-query-bytes)", "zdns_vanguard_qps"},
		},
		{
			name:     "Prometheus unavailable is a 503 with the cause",
			adapter:  "answers 500 \"unable to fetch metrics\" and only logs the cause",
			call:     bySelector("app=a", ""),
			query:    answer(nil, fmt.Errorf("query: %w: connection refused", prometheus.ErrUnavailable)),
			wantCode: http.StatusServiceUnavailable,
		},
		{
			name:    "an external rule whose resources map no namespace still matches the request's namespace",
			adapter: "cannot build the namespace matcher and answers 500 in every namespace, unless the rule sets namespaced: false",
			rules: `externalRules:
- seriesQuery: '{namespace!=""}'
  name: {matches: '^(.+)_queries_total$', as: '${1}_qps'}
  metricsQuery: sum(rate(<<.Series>>{<<.LabelMatchers>>}[1m]))
`,
			call:     external(""),
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
			p := defaultProvider(t, prom, path, objs...)
			got, err := tt.call(p)
			checkStatus(t, err, tt.wantCode, tt.wantMessage...)
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
