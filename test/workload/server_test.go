package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/klog/v2/ktesting"
	clocktesting "k8s.io/utils/clock/testing"
)

func newTestServer(t *testing.T) *server {
	t.Helper()
	clk := clocktesting.NewFakePassiveClock(time.Unix(1000, 0))
	held := newHeldMemory(make([]byte, 64*pageSize), pageSize, time.Hour, func([]byte) error { return nil })
	logger, _ := ktesting.NewTestContext(t)
	return newServer(clk, logger, newHashWork(1000), held)
}

func get(s *server, path string) (int, string) {
	rec := httptest.NewRecorder()
	s.handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec.Code, rec.Body.String()
}

func TestServerAnswersOnlyWhenReady(t *testing.T) {
	s := newTestServer(t)
	type codes struct{ Query, Readyz, Livez int }
	probe := func() codes {
		q, _ := get(s, "/query")
		r, _ := get(s, "/readyz")
		l, _ := get(s, "/livez")
		return codes{q, r, l}
	}
	unavailable := http.StatusServiceUnavailable
	if diff := cmp.Diff(codes{unavailable, unavailable, http.StatusOK}, probe()); diff != "" {
		t.Errorf("while starting, only /livez answers 200 (-want +got):\n%s", diff)
	}
	s.ready.Store(true)
	if diff := cmp.Diff(codes{http.StatusOK, http.StatusOK, http.StatusOK}, probe()); diff != "" {
		t.Errorf("once ready, everything answers 200 (-want +got):\n%s", diff)
	}
	s.stopping.Store(true)
	if diff := cmp.Diff(codes{http.StatusOK, unavailable, http.StatusOK}, probe()); diff != "" {
		t.Errorf("once stopping, /readyz fails but queries are still answered until the endpoints drop the pod (-want +got):\n%s", diff)
	}
}

func TestQueryBatch(t *testing.T) {
	tests := []struct {
		name        string
		path        string
		wantCode    int
		wantQueries float64
	}{
		{"a request without n is one query", "/query", http.StatusOK, 1},
		{"n queries are answered and counted", "/query?n=25", http.StatusOK, 25},
		{"n up to maxBatch is answered", "/query?n=1000", http.StatusOK, 1000},
		{"n = 0 is refused and nothing counted", "/query?n=0", http.StatusBadRequest, 0},
		{"n above maxBatch is refused", "/query?n=1001", http.StatusBadRequest, 0},
		{"n that is not a number is refused", "/query?n=ten", http.StatusBadRequest, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestServer(t)
			s.ready.Store(true)
			code, body := get(s, tt.path)
			if code != tt.wantCode {
				t.Fatalf("GET %s = %d %q, want %d", tt.path, code, body, tt.wantCode)
			}
			if code == http.StatusOK && len(strings.TrimSpace(body)) != 64 {
				t.Errorf("GET %s answered %q, want a hex SHA-256 digest", tt.path, body)
			}
			if got := exposed(t, s)[queriesName].GetMetric()[0].GetCounter().GetValue(); got != tt.wantQueries {
				t.Errorf("%s = %v, want %v", queriesName, got, tt.wantQueries)
			}
		})
	}
}

// exposed scrapes s's /metrics and parses the text exposition.
func exposed(t *testing.T, s *server) map[string]*dto.MetricFamily {
	t.Helper()
	code, body := get(s, "/metrics")
	if code != http.StatusOK {
		t.Fatalf("GET /metrics = %d", code)
	}
	return parseMetrics(t, body)
}

// parseMetrics parses a Prometheus text exposition.
func parseMetrics(t *testing.T, body string) map[string]*dto.MetricFamily {
	t.Helper()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("parse /metrics: %v\n%s", err, body)
	}
	return families
}

func TestMetricsExposition(t *testing.T) {
	s := newTestServer(t)
	s.ready.Store(true)
	for _, path := range []string{"/query?n=10", "/query?n=7"} {
		if code, _ := get(s, path); code != http.StatusOK {
			t.Fatalf("GET %s = %d", path, code)
		}
	}
	type series struct {
		Type   string
		Labels int
		Value  float64
	}
	families := exposed(t, s)
	got := map[string]series{}
	for _, name := range []string{queriesName, "zdns_vanguard_held_bytes", "zdns_vanguard_hash_bytes_per_query"} {
		f, ok := families[name]
		if !ok {
			t.Errorf("/metrics has no %s", name)
			continue
		}
		m := f.GetMetric()[0]
		got[name] = series{Type: f.GetType().String(), Labels: len(m.GetLabel()), Value: m.GetCounter().GetValue() + m.GetGauge().GetValue()}
	}
	want := map[string]series{
		// No labels: Prometheus adds namespace and pod from the pod it scrapes,
		// which is what the default rules map to the pod resource.
		queriesName:                          {Type: "COUNTER", Value: 17},
		"zdns_vanguard_held_bytes":           {Type: "GAUGE", Value: 17 * pageSize},
		"zdns_vanguard_hash_bytes_per_query": {Type: "GAUGE", Value: 1000},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("/metrics (-want +got):\n%s", diff)
	}
	if _, ok := families["process_cpu_seconds_total"]; !ok {
		t.Errorf("/metrics has no process_cpu_seconds_total (the process collector)")
	}
}
