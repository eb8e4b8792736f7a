package status

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/events"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/decision"
)

// Reasons of the ExternalMetricFallbackActive condition and of the fallback events (KEP-5679
// names the condition and the ExternalMetricFallbackActivated event).
const (
	// ReasonFallbackActivated is the event of a metric whose fallback began.
	ReasonFallbackActivated = "ExternalMetricFallbackActivated"
	// ReasonFallbackDeactivated is the event of a metric whose fallback ended: it was read again.
	ReasonFallbackDeactivated = "ExternalMetricFallbackDeactivated"
	// ReasonFallbackActive is the condition's reason while a metric proposes its fallback.
	ReasonFallbackActive = "FallbackActive"
	// ReasonFallbackPending is the condition's reason while a metric fails, not yet for long enough.
	ReasonFallbackPending = "FallbackPending"
	// ReasonMetricsAvailable is the condition's reason while every metric with a fallback is read.
	ReasonMetricsAvailable = "MetricsAvailable"
)

// ReportFallbacks sets the ExternalMetricFallbackActive condition from the round's fallback
// states (and removes it from a PodAutoscaler without any fallback), and emits a Normal event for
// each metric whose fallback began or ended since the last round, when wasActive said whether it
// was active.
func ReportFallbacks(rec events.EventRecorder, pa *podpilotv1alpha1.PodAutoscaler, states []decision.FallbackState,
	wasActive func(decision.MetricID) bool, now time.Time) {
	if len(states) == 0 {
		meta.RemoveStatusCondition(&pa.Status.Conditions, podpilotv1alpha1.ConditionExternalMetricFallbackActive)
		return
	}
	var active, pending []string
	for _, s := range states {
		name := "external metric " + s.ID.Name
		switch {
		case s.Active:
			active = append(active, fmt.Sprintf("%s has failed since %s: it proposes its fallback of %d replicas",
				name, s.FailingSince.UTC().Format(time.RFC3339), s.Fallback.Replicas))
		case !s.FailingSince.IsZero():
			pending = append(pending, fmt.Sprintf("%s has failed since %s: its fallback of %d replicas applies from %s",
				name, s.FailingSince.UTC().Format(time.RFC3339), s.Fallback.Replicas, s.FailingSince.Add(s.Fallback.After).UTC().Format(time.RFC3339)))
		}
		switch was := wasActive(s.ID); {
		case s.Active && !was:
			rec.Eventf(pa, nil, corev1.EventTypeNormal, ReasonFallbackActivated, actionGetMetrics,
				"Fallback activated for external metric '%s' after %s of consecutive failures, using fallback replica count: %d",
				s.ID.Name, now.Sub(s.FailingSince).Truncate(time.Second), s.Fallback.Replicas)
		case !s.Active && was && s.FailingSince.IsZero():
			rec.Eventf(pa, nil, corev1.EventTypeNormal, ReasonFallbackDeactivated, actionGetMetrics,
				"Fallback deactivated for external metric '%s': the metric was read again", s.ID.Name)
		}
	}
	switch {
	case len(active) > 0:
		SetCondition(pa, podpilotv1alpha1.ConditionExternalMetricFallbackActive, true, ReasonFallbackActive, strings.Join(active, "; "), now)
	case len(pending) > 0:
		SetCondition(pa, podpilotv1alpha1.ConditionExternalMetricFallbackActive, false, ReasonFallbackPending, strings.Join(pending, "; "), now)
	default:
		SetCondition(pa, podpilotv1alpha1.ConditionExternalMetricFallbackActive, false, ReasonMetricsAvailable,
			"every External metric with a fallback was read", now)
	}
}
