package state

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/decision"
	"github.com/podpilot/podpilot/pkg/autoscaler/normalize"
)

// FallbackMark is where an External metric's fallback stood after the last round: when its
// current run of failed reads began (zero while it is read) and whether it proposed its fallback
// replicas.
type FallbackMark struct {
	FailingSince time.Time
	Active       bool
}

// FallbacksOf reads the fallback marks checkpointed in status.currentMetrics (fallbackStatus and
// firstFailureTime), by metric. A metric without a checkpointed start has none: the next round
// that sees it fail starts its count then, so a start that was never checkpointed makes a new
// leader's fallback come later, never sooner.
func FallbacksOf(s podpilotv1alpha1.PodAutoscalerStatus) map[decision.MetricID]FallbackMark {
	var out map[decision.MetricID]FallbackMark
	for _, m := range s.CurrentMetrics {
		if m.Type != podpilotv1alpha1.ExternalMetricSourceType || (m.FirstFailureTime == nil && m.FallbackStatus != podpilotv1alpha1.FallbackActive) {
			continue
		}
		if out == nil {
			out = map[decision.MetricID]FallbackMark{}
		}
		mark := FallbackMark{Active: m.FallbackStatus == podpilotv1alpha1.FallbackActive}
		if m.FirstFailureTime != nil {
			mark.FailingSince = m.FirstFailureTime.Time
		}
		out[decision.MetricID{Kind: decision.ExternalMetric, Name: m.Name}] = mark
	}
	return out
}

// MarksOf returns the marks the round's fallback states leave, by metric.
func MarksOf(states []decision.FallbackState) map[decision.MetricID]FallbackMark {
	if len(states) == 0 {
		return nil
	}
	out := make(map[decision.MetricID]FallbackMark, len(states))
	for _, s := range states {
		out[s.ID] = FallbackMark{FailingSince: s.FailingSince, Active: s.Active}
	}
	return out
}

// WithFailureStarts returns metrics with the failure start marks hold for each metric with a
// fallback (see decision.FailingSince).
func WithFailureStarts(metrics []decision.Metric, marks map[decision.MetricID]FallbackMark) []decision.Metric {
	for i := range metrics {
		if metrics[i].Fallback != nil {
			metrics[i].FailingSince = marks[metrics[i].ID()].FailingSince
		}
	}
	return metrics
}

// PersistFallbacks writes the round's fallback states into status.currentMetrics as their
// checkpoint: fallbackStatus and firstFailureTime of each metric with a fallback, in an entry of
// its own when the round computed none (a fast path). Status keeps whole seconds, so the start is
// rounded up: read back by a new leader, the failure counts a little shorter, never longer.
func PersistFallbacks(s *podpilotv1alpha1.PodAutoscalerStatus, states []decision.FallbackState) {
	for _, st := range states {
		i := indexOf(s.CurrentMetrics, st.ID)
		if i < 0 {
			s.CurrentMetrics = append(s.CurrentMetrics, podpilotv1alpha1.MetricStatus{Type: podpilotv1alpha1.ExternalMetricSourceType, Name: st.ID.Name})
			i = len(s.CurrentMetrics) - 1
		}
		m := &s.CurrentMetrics[i]
		m.FallbackStatus, m.FirstFailureTime = podpilotv1alpha1.FallbackNormal, nil
		if st.Active {
			m.FallbackStatus = podpilotv1alpha1.FallbackActive
		}
		if !st.FailingSince.IsZero() {
			t := metav1.NewTime(normalize.CeilSecond(st.FailingSince))
			m.FirstFailureTime = &t
		}
	}
}

// indexOf returns the index of the External metric id names in metrics, -1 when absent.
func indexOf(metrics []podpilotv1alpha1.MetricStatus, id decision.MetricID) int {
	for i, m := range metrics {
		if id.Kind == decision.ExternalMetric && m.Type == podpilotv1alpha1.ExternalMetricSourceType && m.Name == id.Name {
			return i
		}
	}
	return -1
}
