package exporter

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

func scrape(t *testing.T, e *Exporter) string {
	t.Helper()
	rec := httptest.NewRecorder()
	e.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	return rec.Body.String()
}

func TestExporter(t *testing.T) {
	pod := map[string]string{"namespace": "ns", "pod": "p-0"}
	tests := []struct {
		name string
		do   func(e *Exporter, clk *clocktesting.FakePassiveClock)
		want []string
		not  []string
	}{{
		name: "a gauge is served with its labels and value",
		do:   func(e *Exporter, _ *clocktesting.FakePassiveClock) { e.SetGauge("zdns_vanguard_qps", pod, 1500) },
		want: []string{`zdns_vanguard_qps{namespace="ns",pod="p-0"} 1500`},
	}, {
		name: "a counter grows by its rate per second",
		do: func(e *Exporter, clk *clocktesting.FakePassiveClock) {
			e.SetRate("zdns_vanguard_queries_total", pod, 100)
			clk.SetTime(clk.Now().Add(10 * time.Second))
		},
		want: []string{`zdns_vanguard_queries_total{namespace="ns",pod="p-0"} 1000`},
	}, {
		name: "changing a counter's rate keeps what it counted so far",
		do: func(e *Exporter, clk *clocktesting.FakePassiveClock) {
			e.SetRate("q_total", pod, 100)
			clk.SetTime(clk.Now().Add(10 * time.Second))
			e.SetRate("q_total", pod, 10)
			clk.SetTime(clk.Now().Add(10 * time.Second))
		},
		want: []string{`q_total{namespace="ns",pod="p-0"} 1100`},
	}, {
		name: "a deleted series is no longer served",
		do: func(e *Exporter, _ *clocktesting.FakePassiveClock) {
			e.SetGauge("g", pod, 1)
			e.Delete("g", pod)
		},
		not: []string{"g{"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clk := clocktesting.NewFakePassiveClock(time.Unix(1000, 0))
			e := New(clk)
			tc.do(e, clk)
			out := scrape(t, e)
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("scrape lacks %q:\n%s", w, out)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(out, n) {
					t.Errorf("scrape has %q:\n%s", n, out)
				}
			}
		})
	}
}
