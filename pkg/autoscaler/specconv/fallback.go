package specconv

import (
	"math"
	"time"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/decision"
)

// Fallback converts an External metric's fallback; nil without one. An unset
// failureDurationSeconds (the CRD defaults it; an object read without defaulting may lack it) is
// the default, one below the minimum is the minimum, and one beyond time.Duration's range (about
// 292 years; KEP-5679 sets no maximum) is the largest duration: never a fallback sooner than the
// spec says.
func Fallback(f *podpilotv1alpha1.ExternalMetricFallback) *decision.Fallback {
	if f == nil {
		return nil
	}
	secs := int64(podpilotv1alpha1.DefaultFailureDurationSeconds)
	if f.FailureDurationSeconds != nil {
		secs = max(*f.FailureDurationSeconds, secs)
	}
	after := time.Duration(math.MaxInt64)
	if secs <= math.MaxInt64/int64(time.Second) {
		after = time.Duration(secs) * time.Second
	}
	return &decision.Fallback{Replicas: f.Replicas, After: after}
}

// SyncPeriod returns the period of a PodAutoscaler's rounds: its behavior's syncPeriodSeconds
// (KEP-6003), or def, the controller's, when unset or not positive.
func SyncPeriod(b *podpilotv1alpha1.PodAutoscalerBehavior, def time.Duration) time.Duration {
	if b == nil || b.SyncPeriodSeconds == nil || *b.SyncPeriodSeconds < 1 {
		return def
	}
	return time.Duration(*b.SyncPeriodSeconds) * time.Second
}
