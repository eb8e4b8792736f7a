package prometheus

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/testutil"
	testingclock "k8s.io/utils/clock/testing"
)

func TestMetricsCountCallsByOperationAndOutcome(t *testing.T) {
	srv, _ := fakeProm(t, "", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		switch r.Form.Get("query") {
		case "down":
			respondWith(503, "unavailable")(w, r)
		case "bad(":
			respondWith(400, `{"status":"error","errorType":"bad_data","error":"parse error"}`)(w, r)
		default:
			promHandler("", nil, make(chan seenRequest, 1)).ServeHTTP(w, r)
		}
	})
	reg := metrics.NewKubeRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatalf("NewMetrics() = %v", err)
	}
	cfg, err := optionsFor(srv.URL).Config()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Clock = testingclock.NewFakePassiveClock(time.Unix(1700000000, 0))
	c, err := New(cfg, m)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"up", "down", "bad(", "up"} {
		_, _ = c.Query(t.Context(), q, time.Time{})
	}
	_, _ = c.Series(t.Context(), []string{"up"}, time.Time{}, time.Time{})

	want := `
# HELP podpilot_prometheus_client_request_errors_total [ALPHA] Failed calls to the Prometheus HTTP API, by backend, operation and outcome.
# TYPE podpilot_prometheus_client_request_errors_total counter
podpilot_prometheus_client_request_errors_total{backend="default",operation="query",outcome="bad_query"} 1
podpilot_prometheus_client_request_errors_total{backend="default",operation="query",outcome="unavailable"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "podpilot_prometheus_client_request_errors_total"); err != nil {
		t.Error(err)
	}
	for _, tc := range []struct {
		labels map[string]string
		want   uint64
	}{
		{map[string]string{"operation": "query", "outcome": "success"}, 2},
		{map[string]string{"operation": "query"}, 4},
		{map[string]string{"operation": "series", "outcome": "success"}, 1},
	} {
		vec, err := testutil.GetHistogramVecFromGatherer(reg, "podpilot_prometheus_client_request_duration_seconds", tc.labels)
		if err != nil {
			t.Fatal(err)
		}
		if got := vec.GetAggregatedSampleCount(); got != tc.want {
			t.Errorf("duration samples for %v = %d, want %d", tc.labels, got, tc.want)
		}
	}
}

func TestNewMetricsRegistersOnlyOnTheGivenRegistry(t *testing.T) {
	reg := metrics.NewKubeRegistry()
	if _, err := NewMetrics(reg); err != nil {
		t.Fatalf("NewMetrics() = %v", err)
	}
	if _, err := NewMetrics(reg); err == nil {
		t.Error("second NewMetrics() on the same registry = nil, want a duplicate registration error")
	}
	if _, err := NewMetrics(metrics.NewKubeRegistry()); err != nil {
		t.Errorf("NewMetrics() on a fresh registry = %v", err)
	}
}
