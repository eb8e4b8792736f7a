package controller

import (
	"math"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
)

// TestANewLeaderShowsTheCheckpointedWAPEUntilItHasCountedAnHour: the accuracy lives in the
// leader's memory; a new leader keeps the WAPE status shows until an hour of its own forecasts
// (one a period) has been counted, then shows its own.
func TestANewLeaderShowsTheCheckpointedWAPEUntilItHasCountedAnHour(t *testing.T) {
	const period = 15 * time.Second
	status := &podpilotv1alpha1.PredictionStatus{Metrics: []podpilotv1alpha1.MetricForecast{{Name: "qps", WAPEPercent: ptr.To[int32](12)}}}
	tests := []struct {
		name    string
		seed    float64
		rounds  int
		want    float64
		wantNaN bool
	}{
		{name: "no forecast counted yet: the checkpointed WAPE", seed: checkpointedWAPE(status, 0, "qps"), rounds: 0, want: 0.12},
		{name: "less than an hour counted: still the checkpointed WAPE", seed: checkpointedWAPE(status, 0, "qps"), rounds: 100, want: 0.12},
		{name: "an hour counted: the leader's own (every forecast 10% high)", seed: checkpointedWAPE(status, 0, "qps"), rounds: 240, want: 0.10},
		{name: "no checkpoint: the leader's own from the first forecast", seed: math.NaN(), rounds: 10, want: 0.10},
		{name: "another metric at that position has no checkpointed WAPE", seed: checkpointedWAPE(status, 0, "latency"), rounds: 0, wantNaN: true},
	}
	start := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := &accuracy{seed: tc.seed}
			now := start
			for range tc.rounds {
				a.settle(now, 1000, period)
				a.add(now, 1100)
				a.settle(now, 1000, period)
				now = now.Add(period)
			}
			got := a.wape(now, period)
			if tc.wantNaN != math.IsNaN(got) || (!tc.wantNaN && math.Abs(got-tc.want) > 1e-9) {
				t.Errorf("wape = %v, want %v (NaN: %t)", got, tc.want, tc.wantNaN)
			}
		})
	}
}
