package prediction

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
	qps := podpilotv1alpha1.MetricStatus{Type: podpilotv1alpha1.CustomMetricSourceType, Name: "qps"}
	status := &podpilotv1alpha1.PredictionStatus{Metrics: []podpilotv1alpha1.MetricForecast{{Type: qps.Type, Name: "qps", WAPEPercent: ptr.To[int32](12)}}}
	tests := []struct {
		name    string
		seed    float64
		rounds  int
		want    float64
		wantNaN bool
	}{
		{name: "no forecast counted yet: the checkpointed WAPE", seed: checkpointedWAPE(status, qps), rounds: 0, want: 0.12},
		{name: "less than an hour counted: still the checkpointed WAPE", seed: checkpointedWAPE(status, qps), rounds: 100, want: 0.12},
		{name: "an hour counted: the leader's own (every forecast 10% high)", seed: checkpointedWAPE(status, qps), rounds: 240, want: 0.10},
		{name: "no checkpoint: the leader's own from the first forecast", seed: math.NaN(), rounds: 10, want: 0.10},
		{name: "another metric has no checkpointed WAPE", seed: checkpointedWAPE(status, podpilotv1alpha1.MetricStatus{Type: qps.Type, Name: "latency"}), rounds: 0, wantNaN: true},
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

// TestACheckpointedWAPEBelongsToItsOwnMetricOnly: a metric's checkpointed accuracy is found by what
// names it in status.currentMetrics (type, name, object, container), wherever it stands in the
// list (a metric without a forecast has no entry), and one metric's accuracy is never another's
// of the same name; an entry written before entries carried a type is matched by name.
func TestACheckpointedWAPEBelongsToItsOwnMetricOnly(t *testing.T) {
	cpu := func(container string) podpilotv1alpha1.MetricStatus {
		return podpilotv1alpha1.MetricStatus{Type: podpilotv1alpha1.ContainerResourceMetricSourceType, Name: "cpu", Container: container}
	}
	entry := func(id podpilotv1alpha1.MetricStatus, wape int32) podpilotv1alpha1.MetricForecast {
		return podpilotv1alpha1.MetricForecast{Type: id.Type, Name: id.Name, DescribedObject: id.DescribedObject, Container: id.Container, WAPEPercent: ptr.To(wape)}
	}
	queue := podpilotv1alpha1.MetricStatus{Type: podpilotv1alpha1.ObjectMetricSourceType, Name: "depth", DescribedObject: "Service/queue"}
	status := &podpilotv1alpha1.PredictionStatus{Metrics: []podpilotv1alpha1.MetricForecast{
		entry(cpu("app"), 7), entry(cpu("sidecar"), 30), entry(queue, 12),
	}}
	tests := []struct {
		name string
		s    *podpilotv1alpha1.PredictionStatus
		id   podpilotv1alpha1.MetricStatus
		want float64 // NaN: none
	}{
		{name: "cpu of the app container", s: status, id: cpu("app"), want: 0.07},
		{name: "cpu of the sidecar, same name", s: status, id: cpu("sidecar"), want: 0.30},
		{name: "cpu of a container with no entry", s: status, id: cpu("other"), want: math.NaN()},
		{name: "the same metric of another object", s: status, id: podpilotv1alpha1.MetricStatus{Type: queue.Type, Name: "depth", DescribedObject: "Service/other"}, want: math.NaN()},
		{name: "the object's metric", s: status, id: queue, want: 0.12},
		{name: "an entry without a type (before the upgrade) by name", s: &podpilotv1alpha1.PredictionStatus{Metrics: []podpilotv1alpha1.MetricForecast{{Name: "depth", WAPEPercent: ptr.To[int32](5)}}}, id: queue, want: 0.05},
		{name: "no prediction status", s: nil, id: queue, want: math.NaN()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := checkpointedWAPE(tc.s, tc.id)
			if math.IsNaN(tc.want) != math.IsNaN(got) || (!math.IsNaN(tc.want) && math.Abs(got-tc.want) > 1e-9) {
				t.Errorf("checkpointedWAPE = %v, want %v", got, tc.want)
			}
		})
	}
}
