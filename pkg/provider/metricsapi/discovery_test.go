package metricsapi

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/common/model"
	"k8s.io/component-base/metrics/testutil"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"

	"github.com/podpilot/podpilot/pkg/provider/prometheus"
)

// servedNames renders a snapshot as "metric info -> series" for comparison.
func servedNames(s *snapshot) map[string]string {
	out := map[string]string{}
	for _, info := range s.customList {
		out[info.String()] = s.custom[info].series
	}
	for _, info := range s.externalList {
		out["external/"+info.Metric] = s.external[info.Metric].series
	}
	return out
}

func TestDiscovery(t *testing.T) {
	unavailable := fmt.Errorf("series: %w: %w", prometheus.ErrUnavailable, errors.New("dial tcp: connection refused"))
	tests := []struct {
		name   string
		series map[string][]model.LabelSet
		errs   map[string]error
		want   map[string]string
		// wantNotReady is why readiness fails after the pass, "" when it passes.
		wantNotReady string
	}{
		{
			name:   "seed: the per-pod counter is served as pods/zdns_vanguard_qps and wins over the gauge of that name",
			series: seedSeries(),
			want: map[string]string{
				"namespaces/zdns_vanguard_qps":       "zdns_vanguard_queries_total",
				"pods/zdns_vanguard_qps(namespaced)": "zdns_vanguard_queries_total",
				"external/zdns_vanguard_qps":         "zdns_vanguard_queries_total",
			},
		},
		{
			name: "other counters are served per second and gauges under their own name",
			series: map[string][]model.LabelSet{podsQuery: {
				labelSet("http_requests_total", "namespace", "ns", "pod", "p1"),
				labelSet("queue_depth", "namespace", "ns", "pod", "p1"),
				labelSet("queue_depth", "namespace", "ns", "pod", "p2"),
				labelSet("latency_bucket", "namespace", "ns", "pod", "p1", "le", "1"),
			}},
			want: map[string]string{
				"namespaces/http_requests_per_second":       "http_requests_total",
				"pods/http_requests_per_second(namespaced)": "http_requests_total",
				"namespaces/queue_depth":                    "queue_depth",
				"pods/queue_depth(namespaced)":              "queue_depth",
			},
		},
		{
			name:   "a failing series query on the first pass hides only its own rules' metrics",
			series: seedSeries(),
			errs:   map[string]error{nsQuery: unavailable},
			want: map[string]string{
				"namespaces/zdns_vanguard_qps":       "zdns_vanguard_queries_total",
				"pods/zdns_vanguard_qps(namespaced)": "zdns_vanguard_queries_total",
			},
			wantNotReady: `1 of 3 series queries never answered ({namespace!=""}): discover series {namespace!=""}: series: prometheus unavailable`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prom := &fakeProm{series: tt.series, seriesErr: tt.errs}
			p, _ := testProvider(t, prom, "")
			if err := p.HealthChecker().Check(httptest.NewRequest("GET", "/readyz", nil)); err == nil {
				t.Error("health check passed before the first discovery pass")
			}
			p.refresh(t.Context())
			if diff := cmp.Diff(tt.want, servedNames(p.snap.Load())); diff != "" {
				t.Errorf("served metrics (-want +got):\n%s", diff)
			}
			if got, want := prom.seriesCalls.Load(), int32(3); got != want {
				t.Errorf("series calls = %d, want %d (one per distinct series query)", got, want)
			}
			err := p.HealthChecker().Check(httptest.NewRequest("GET", "/readyz", nil))
			if tt.wantNotReady == "" && err != nil {
				t.Errorf("health check after the first pass: %v", err)
			}
			if tt.wantNotReady != "" && (err == nil || !strings.Contains(err.Error(), tt.wantNotReady)) {
				t.Errorf("health check after the first pass = %v, want it to fail with %q", err, tt.wantNotReady)
			}
			if len(p.ListAllMetrics()) != len(p.snap.Load().custom) || len(p.ListAllExternalMetrics()) != len(p.snap.Load().external) {
				t.Errorf("ListAll* disagree with the snapshot")
			}
		})
	}
}

func TestDiscoveryKeepsLastGoodSeriesOfAFailingQuery(t *testing.T) {
	prom := &fakeProm{series: seedSeries()}
	p, _ := testProvider(t, prom, "")
	p.refresh(t.Context())

	// The pods query now fails, the namespace query finds a new series.
	prom.seriesErr = map[string]error{podsQuery: fmt.Errorf("series: %w: %w", prometheus.ErrUnavailable, errors.New("timeout"))}
	prom.series = map[string][]model.LabelSet{nsQuery: {labelSet("jobs_pending", "namespace", "ns")}}
	p.refresh(t.Context())

	want := map[string]string{
		"namespaces/zdns_vanguard_qps":       "zdns_vanguard_queries_total",
		"pods/zdns_vanguard_qps(namespaced)": "zdns_vanguard_queries_total",
		"external/jobs_pending":              "jobs_pending",
	}
	if diff := cmp.Diff(want, servedNames(p.snap.Load())); diff != "" {
		t.Errorf("served metrics (-want +got):\n%s", diff)
	}
	for i := range 3 {
		if got := counterValue(t, p.metrics.seriesFailures, fmt.Sprintf("rules[%d]", i), "default"); got != 1 {
			t.Errorf("failures of rules[%d] = %v, want 1", i, got)
		}
	}
	if got := counterValue(t, p.metrics.seriesFailures, "externalRules[0]", "default"); got != 0 {
		t.Errorf("failures of externalRules[0] = %v, want 0", got)
	}
	if got, err := testutil.GetGaugeMetricValue(p.metrics.discovered.WithLabelValues(apiExternal)); err != nil || got != 1 {
		t.Errorf("discovered external metrics = %v, %v; want 1", got, err)
	}
}

// TestReadyMeansDiscoveryAnswered: until every series query has answered once, /readyz fails
// naming the cause and a metric not (yet) served is a 503 naming Prometheus, not a 404 "not
// found"; once discovery has succeeded, readiness stays passed through later failures and an
// unknown metric is a 404 again (issue 21 §5).
func TestReadyMeansDiscoveryAnswered(t *testing.T) {
	down := fmt.Errorf("series: %w: %w", prometheus.ErrUnavailable, errors.New("dial tcp 127.0.0.1:9090: connect: connection refused"))
	prom := &fakeProm{series: seedSeries(), seriesErr: map[string]error{podsQuery: down, nsQuery: down, `{namespace!="",pod=""}`: down}}
	p := servingProvider(t, prom, "")
	ready := func() error { return p.HealthChecker().Check(httptest.NewRequest(http.MethodGet, "/readyz", nil)) }
	unknown := func() (custom, external error) {
		_, custom = p.GetMetricBySelector(t.Context(), "ns", nil, provider.CustomMetricInfo{GroupResource: podsGR, Namespaced: true, Metric: "nope"}, nil)
		_, external = p.GetExternalMetric(t.Context(), "ns", nil, provider.ExternalMetricInfo{Metric: "nope"})
		return custom, external
	}

	if err := ready(); err == nil || !strings.Contains(err.Error(), "prometheus unavailable") {
		t.Errorf("readiness with Prometheus down = %v, want a failure naming Prometheus", err)
	}
	custom, external := unknown()
	checkStatus(t, custom, http.StatusServiceUnavailable, "metric discovery from Prometheus has not succeeded yet", "connection refused")
	checkStatus(t, external, http.StatusServiceUnavailable, "metric discovery from Prometheus has not succeeded yet", "connection refused")

	prom.seriesErr = nil
	p.refresh(t.Context())
	if err := ready(); err != nil {
		t.Errorf("readiness once discovery answered = %v", err)
	}
	custom, external = unknown()
	checkStatus(t, custom, http.StatusNotFound, "nope")
	checkStatus(t, external, http.StatusNotFound, "nope")

	prom.seriesErr = map[string]error{podsQuery: down, nsQuery: down}
	p.refresh(t.Context())
	if err := ready(); err != nil {
		t.Errorf("readiness after a later failed pass = %v, want it to stay passed", err)
	}
	custom, _ = unknown()
	checkStatus(t, custom, http.StatusNotFound, "nope")
}

func TestCompactSeriesKeepsOneSeriesPerNameAndLabelNames(t *testing.T) {
	sets := []model.LabelSet{
		labelSet("b", "namespace", "ns", "pod", "p1"),
		labelSet("b", "namespace", "ns", "pod", "p2"),
		labelSet("b", "namespace", "ns", "pod", "p3", "empty", ""),
		labelSet("a", "namespace", "ns"),
		{"namespace": "nameless"},
	}
	got := compactSeries(sets)
	want := []string{"a{namespace}", "b{namespace,pod}"}
	var shapes []string
	for _, s := range got {
		shape := s.Name + "{"
		for i, k := range []string{"namespace", "pod"} {
			if _, ok := s.Labels[k]; ok {
				if i > 0 {
					shape += ","
				}
				shape += k
			}
		}
		shapes = append(shapes, shape+"}")
	}
	if diff := cmp.Diff(want, shapes); diff != "" {
		t.Errorf("compacted series (-want +got):\n%s", diff)
	}
}
