package main

import (
	"strings"
	"testing"
	"time"
)

func TestDailyRampRisesHoldsAndRepeatsEveryDay(t *testing.T) {
	from := time.Date(2026, 11, 29, 6, 0, 0, 0, time.UTC)
	load := dailyRamp(from, time.Minute, time.Hour, 1000, 8000)
	for _, tc := range []struct {
		at   time.Time
		want float64
	}{
		{from.Add(-time.Second), 1000},
		{from, 1000},
		{from.Add(30 * time.Second), 4500},
		{from.Add(time.Minute), 8000},
		{from.Add(61 * time.Minute), 1000},
		{from.Add(-24*time.Hour + 30*time.Second), 4500}, // the day before
		{from.Add(-48*time.Hour + 2*time.Minute), 8000},
	} {
		if got := load(tc.at); got != tc.want {
			t.Errorf("load(%s) = %g, want %g", tc.at, got, tc.want)
		}
	}
}

func TestCounterHistoryCountsTheLoadBetweenSamples(t *testing.T) {
	start := time.Unix(1000, 0)
	got := counterHistory("zdns_vanguard_queries_total", map[string]string{"pod": "p-1", "namespace": "ns"}, start, start.Add(30*time.Second),
		15*time.Second, func(at time.Time) float64 { return float64(at.Unix() - 1000 + 10) })
	want := strings.Join([]string{
		"# TYPE zdns_vanguard_queries counter",
		`zdns_vanguard_queries_total{namespace="ns",pod="p-1"} 0 1000`,
		`zdns_vanguard_queries_total{namespace="ns",pod="p-1"} 150 1015`, // 10/s over 15s
		`zdns_vanguard_queries_total{namespace="ns",pod="p-1"} 525 1030`, // then 25/s
		"# EOF", "",
	}, "\n")
	if got != want {
		t.Fatalf("counterHistory =\n%s\nwant\n%s", got, want)
	}
}

func TestReadyAheadIsPositiveBeforeTheLoad(t *testing.T) {
	start := time.Unix(0, 0)
	samples := []sample{{At: 10 * time.Second, Ready: 1}, {At: 40 * time.Second, Ready: 3}, {At: 50 * time.Second, Ready: 4}}
	if got, ok := readyAhead(samples, start, start.Add(time.Minute), 4); !ok || got != 10*time.Second {
		t.Errorf("readyAhead = %s, %v; want 10s before", got, ok)
	}
	if got, ok := readyAhead(samples, start, start.Add(45*time.Second), 4); !ok || got != -5*time.Second {
		t.Errorf("readyAhead = %s, %v; want 5s after (-5s)", got, ok)
	}
	if _, ok := readyAhead(samples, start, start, 5); ok {
		t.Error("readyAhead found 5 ready endpoints that never were")
	}
}
