package metricsapi

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/metrics/pkg/apis/external_metrics"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"

	"github.com/podpilot/podpilot/pkg/provider/prometheus"
)

func TestGetExternalMetric(t *testing.T) {
	ts := testNow.Add(-4 * time.Second)
	qps := provider.ExternalMetricInfo{Metric: "zdns_vanguard_qps"}
	tests := []struct {
		name        string
		info        provider.ExternalMetricInfo
		metricSel   string
		query       func(string) (model.Vector, error)
		want        []external_metrics.ExternalMetricValue
		wantCode    int
		wantMessage []string
		wantQuery   string
	}{
		{
			name:      "the rule's query is matched on the namespace and the metric selector",
			info:      qps,
			metricSel: "zone=a",
			query:     answer(model.Vector{sample(12.5, ts)}, nil),
			want: []external_metrics.ExternalMetricValue{{
				MetricName: "zdns_vanguard_qps", MetricLabels: map[string]string{},
				Timestamp: metav1.NewTime(ts), Value: *resource.NewMilliQuantity(12500, resource.DecimalSI),
			}},
			wantCode:  http.StatusOK,
			wantQuery: `sum(rate(zdns_vanguard_queries_total{zone="a",namespace="ns"}[1m]))`,
		},
		{
			name:  "each sample is one value with its labels; NaN samples are dropped",
			info:  qps,
			query: answer(model.Vector{sample(1, ts, "__name__", "x", "zone", "a"), sample(math.NaN(), ts, "zone", "b")}, nil),
			want: []external_metrics.ExternalMetricValue{{
				MetricName: "zdns_vanguard_qps", MetricLabels: map[string]string{"zone": "a"},
				Timestamp: metav1.NewTime(ts), Value: *resource.NewMilliQuantity(1000, resource.DecimalSI),
			}},
			wantCode:  http.StatusOK,
			wantQuery: `sum(rate(zdns_vanguard_queries_total{namespace="ns"}[1m]))`,
		},
		{
			name:        "an undiscovered external metric is a 404",
			info:        provider.ExternalMetricInfo{Metric: "nope"},
			wantCode:    http.StatusNotFound,
			wantMessage: []string{"nope"},
		},
		{
			name:      "no data is a 404",
			info:      qps,
			query:     answer(model.Vector{}, nil),
			wantCode:  http.StatusNotFound,
			wantQuery: `sum(rate(zdns_vanguard_queries_total{namespace="ns"}[1m]))`,
		},
		{
			name:        "a metric selector with lt is a 400",
			info:        qps,
			metricSel:   "size<3",
			wantCode:    http.StatusBadRequest,
			wantMessage: []string{"unsupported label selector operator"},
		},
		{
			name:        "Prometheus unavailable is a 503 carrying the cause",
			info:        qps,
			query:       answer(nil, fmt.Errorf("query: %w: %w", prometheus.ErrUnavailable, errors.New("HTTP 502 from proxy"))),
			wantCode:    http.StatusServiceUnavailable,
			wantMessage: []string{"HTTP 502 from proxy"},
			wantQuery:   `sum(rate(zdns_vanguard_queries_total{namespace="ns"}[1m]))`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prom := &fakeProm{series: seedSeries(), query: tt.query}
			p := servingProvider(t, prom, "")
			sel, err := labels.Parse(tt.metricSel)
			if err != nil {
				t.Fatal(err)
			}
			got, err := p.GetExternalMetric(t.Context(), "ns", sel, tt.info)
			checkStatus(t, err, tt.wantCode, tt.wantMessage...)
			if err == nil {
				if diff := cmp.Diff(tt.want, got.Items); diff != "" {
					t.Errorf("values (-want +got):\n%s", diff)
				}
			}
			var wantQueries []string
			if tt.wantQuery != "" {
				wantQueries = []string{tt.wantQuery}
			}
			if diff := cmp.Diff(wantQueries, prom.queries); diff != "" {
				t.Errorf("queries (-want +got):\n%s", diff)
			}
		})
	}
}

// The autoscaler's external reads (FreshReads) send the query anew each time, and an API
// request within the max age reuses the autoscaler's answer.
func TestFreshExternalReadsNeverReuseAnAnswer(t *testing.T) {
	ts := testNow.Add(-4 * time.Second)
	prom := &fakeProm{series: seedSeries(), query: answer(model.Vector{sample(12.5, ts)}, nil)}
	p := servingProvider(t, prom, "")
	p.externalQueries = mustShareQueries[model.Vector](t, p.clock, time.Minute, p.metrics.queryCounter(apiExternal))
	qps := provider.ExternalMetricInfo{Metric: "zdns_vanguard_qps"}
	for range 2 {
		if _, err := p.FreshReads().GetExternalMetric(t.Context(), "ns", labels.Everything(), qps); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.GetExternalMetric(t.Context(), "ns", labels.Everything(), qps); err != nil {
		t.Fatal(err)
	}
	if got := len(prom.queries); got != 2 {
		t.Errorf("queries = %d, want 2: one per fresh read, none for the API request", got)
	}
}

// ServesExternal tells podpilot's metrics from others for the forwarder: a discovered metric is
// served; another is a 404, or a 503 before discovery completes (it may yet be podpilot's).
func TestServesExternal(t *testing.T) {
	prom := &fakeProm{series: seedSeries()}
	fresh, _ := testProvider(t, prom, "")
	if served, err := fresh.ServesExternal("zdns_vanguard_qps"); served {
		t.Fatal("served before the first discovery pass")
	} else {
		checkStatus(t, err, http.StatusServiceUnavailable)
	}
	p := servingProvider(t, prom, "")
	if served, err := p.ServesExternal("zdns_vanguard_qps"); !served || err != nil {
		t.Fatalf("a discovered metric: served=%v, %v", served, err)
	}
	served, err := p.ServesExternal("s0-prometheus")
	if served {
		t.Fatal("a metric no rule serves is served")
	}
	checkStatus(t, err, http.StatusNotFound, "s0-prometheus")
}
