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

func TestDailyRampsTakesTheHighestRampAtEachTime(t *testing.T) {
	a := time.Date(2026, 11, 29, 6, 0, 0, 0, time.UTC)
	load := dailyRamps([]time.Time{a, a.Add(6 * time.Minute)}, time.Minute, 2*time.Minute, 1000, 8000)
	for _, tc := range []struct {
		at   time.Time
		want float64
	}{
		{a.Add(2 * time.Minute), 8000},                // the first ramp's hold
		{a.Add(4 * time.Minute), 1000},                // between the two
		{a.Add(6*time.Minute + 30*time.Second), 4500}, // the second ramp rising
		{a.Add(-24*time.Hour + 7*time.Minute), 8000},  // the second ramp, the day before
		{a.Add(-24*time.Hour + 10*time.Minute), 1000}, // after both
	} {
		if got := load(tc.at); got != tc.want {
			t.Errorf("load(%s) = %g, want %g", tc.at, got, tc.want)
		}
	}
}

func TestRampRowSaysWhenTheLastNewPodWasReadyAgainstTheRamp(t *testing.T) {
	start := time.Unix(0, 0)
	rampAt := start.Add(60 * time.Second)
	ss := []sample{
		{At: 10 * time.Second, Replicas: 1, Ready: 1},
		{At: 30 * time.Second, Replicas: 2, Ready: 1}, // forecast: scaled out 30 s before the ramp
		{At: 40 * time.Second, Replicas: 2, Ready: 2},
		{At: 60 * time.Second, Replicas: 2, Ready: 2},
		{At: 80 * time.Second, Replicas: 4, Ready: 2},
		{At: 90 * time.Second, Replicas: 4, Ready: 4}, // all Ready 30 s after the ramp's start
		{At: 150 * time.Second, Replicas: 4, Ready: 4},
	}
	row, ready, ok := rampRow(ss, start, rampAt)
	want := []string{"1 → 4", "2", "-30.0 s", "+30.0 s", "-30.0 s"}
	if !ok || ready != 30*time.Second || strings.Join(row, "|") != strings.Join(want, "|") {
		t.Fatalf("rampRow = %q, %s, %v; want %q, 30s, true", row, ready, ok, want)
	}
	if _, _, ok := rampRow([]sample{{Replicas: 1, Ready: 1}}, start, rampAt); ok {
		t.Error("rampRow without a scale-out says all new pods came")
	}
}

func TestCountAtMostCountsRampsWithPodsReadyInTime(t *testing.T) {
	if got := countAtMost([]float64{-3, 0, 12}, 0); got != 2 {
		t.Errorf("countAtMost = %d, want 2", got)
	}
}
