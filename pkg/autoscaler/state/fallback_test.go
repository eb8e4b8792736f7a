package state

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/decision"
)

// TestFallbackCheckpointReadsBackNeverEarlier checks the fallback marks' round trip through
// status.currentMetrics: a start is rounded up to the second, an entry is added on a round that
// computed none, a metric read again loses its start, and a metric without a checkpointed start
// has none.
func TestFallbackCheckpointReadsBackNeverEarlier(t *testing.T) {
	at := time.Date(2026, 11, 29, 8, 0, 0, 400_000_000, time.UTC)
	queue := decision.MetricID{Kind: decision.ExternalMetric, Name: "queue"}
	lag := decision.MetricID{Kind: decision.ExternalMetric, Name: "lag"}
	tests := []struct {
		name   string
		status podpilotv1alpha1.PodAutoscalerStatus
		states []decision.FallbackState
		want   map[decision.MetricID]FallbackMark
	}{{
		name:   "a start within a second is read back at the next whole second",
		status: podpilotv1alpha1.PodAutoscalerStatus{CurrentMetrics: []podpilotv1alpha1.MetricStatus{{Type: podpilotv1alpha1.ExternalMetricSourceType, Name: "queue"}}},
		states: []decision.FallbackState{{ID: queue, FailingSince: at}},
		want:   map[decision.MetricID]FallbackMark{queue: {FailingSince: at.Truncate(time.Second).Add(time.Second)}},
	}, {
		name:   "a round that computed no status (a fast path) still checkpoints the start and the fallback",
		states: []decision.FallbackState{{ID: queue, FailingSince: at.Truncate(time.Second), Active: true}},
		want:   map[decision.MetricID]FallbackMark{queue: {FailingSince: at.Truncate(time.Second), Active: true}},
	}, {
		name: "a metric read again has no start and is Normal",
		status: podpilotv1alpha1.PodAutoscalerStatus{CurrentMetrics: []podpilotv1alpha1.MetricStatus{{Type: podpilotv1alpha1.ExternalMetricSourceType, Name: "queue",
			FallbackStatus: podpilotv1alpha1.FallbackActive, FirstFailureTime: &metav1.Time{Time: at}}}},
		states: []decision.FallbackState{{ID: queue}, {ID: lag}},
		want:   nil,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := *tc.status.DeepCopy()
			PersistFallbacks(&s, tc.states)
			if diff := cmp.Diff(tc.want, FallbacksOf(s)); diff != "" {
				t.Errorf("FallbacksOf(PersistFallbacks) (-want +got):\n%s", diff)
			}
			for _, m := range s.CurrentMetrics {
				if m.FallbackStatus == "" {
					t.Errorf("metric %s has no fallbackStatus after PersistFallbacks", m.Name)
				}
			}
		})
	}
}
