package specconv

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/decision"
)

// TestFallbackNeverComesSoonerThanTheSpecSays checks the conversion of failureDurationSeconds.
func TestFallbackNeverComesSoonerThanTheSpecSays(t *testing.T) {
	tests := []struct {
		name string
		in   *podpilotv1alpha1.ExternalMetricFallback
		want *decision.Fallback
	}{
		{"no fallback is nil", nil, nil},
		{"an unset duration is the default 180 s", &podpilotv1alpha1.ExternalMetricFallback{Replicas: 3},
			&decision.Fallback{Replicas: 3, After: 180 * time.Second}},
		{"a duration is read in seconds", &podpilotv1alpha1.ExternalMetricFallback{Replicas: 3, FailureDurationSeconds: ptr.To[int64](600)},
			&decision.Fallback{Replicas: 3, After: 10 * time.Minute}},
		{"a duration below the minimum (not admitted) is the minimum", &podpilotv1alpha1.ExternalMetricFallback{Replicas: 3, FailureDurationSeconds: ptr.To[int64](1)},
			&decision.Fallback{Replicas: 3, After: 180 * time.Second}},
		{"a duration beyond time.Duration's range is the largest, never a wrapped negative", &podpilotv1alpha1.ExternalMetricFallback{Replicas: 3, FailureDurationSeconds: ptr.To[int64](math.MaxInt64)},
			&decision.Fallback{Replicas: 3, After: time.Duration(math.MaxInt64)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Fallback(tc.in)); diff != "" {
				t.Errorf("Fallback (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSyncPeriodIsTheSpecsOrTheControllers checks the per-object period of KEP-6003.
func TestSyncPeriodIsTheSpecsOrTheControllers(t *testing.T) {
	def := 15 * time.Second
	tests := []struct {
		name string
		in   *podpilotv1alpha1.PodAutoscalerBehavior
		want time.Duration
	}{
		{"no behavior takes the controller's period", nil, def},
		{"a behavior without syncPeriodSeconds takes the controller's period", &podpilotv1alpha1.PodAutoscalerBehavior{}, def},
		{"syncPeriodSeconds sets the period", &podpilotv1alpha1.PodAutoscalerBehavior{SyncPeriodSeconds: ptr.To[int32](5)}, 5 * time.Second},
		{"a period below the floor of 1 s (not admitted) takes the controller's", &podpilotv1alpha1.PodAutoscalerBehavior{SyncPeriodSeconds: ptr.To[int32](0)}, def},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := SyncPeriod(tc.in, def); got != tc.want {
				t.Errorf("SyncPeriod = %s, want %s", got, tc.want)
			}
		})
	}
}
