package controller

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/decision"
	"github.com/podpilot/podpilot/pkg/autoscaler/normalize"
	"github.com/podpilot/podpilot/pkg/autoscaler/status"
)

// ReasonDryRunRescale is the event and AbleToScale reason of a rescale a dry-run PodAutoscaler
// would have made.
const ReasonDryRunRescale = "DryRunRescale"

// A dry-run PodAutoscaler answers "what would podpilot set now, given the replicas the target
// really has?". Every round decides from the target's real spec.replicas (set by whoever scales
// it: a stock HPA, a person), exactly as an active PodAutoscaler would, and reports the decision
// instead of writing it. Its history follows the same model:
//   - recommendations are recorded as usual, so the stabilization windows behave as if applied;
//   - scale events are the target's real replica changes, observed as the difference between the
//     replicas seen last round (remembered; status.currentReplicas for the first round a leader
//     sees it) and now, dated the round that saw them, so
//     the scaling policies count the changes that really happened, whoever made them; the
//     would-be rescale itself is never recorded, since it did not happen.
//
// status.desiredReplicas is the would-be replica count, status.lastScaleTime is left alone and
// status.mode is DryRun.

// dryRun reports whether pa only reports its decisions. Such a PodAutoscaler never writes its
// target's scale, so it may share the target with another autoscaler.
func dryRun(pa *podpilotv1alpha1.PodAutoscaler) bool {
	return pa.Spec.DryRun
}

// modeOf returns the mode shown in pa's status.
func modeOf(pa *podpilotv1alpha1.PodAutoscaler) podpilotv1alpha1.PodAutoscalerMode {
	if dryRun(pa) {
		return podpilotv1alpha1.DryRunMode
	}
	return podpilotv1alpha1.ActiveMode
}

// observedHistory returns the remembered history of a dry-run pa with the target's real replica
// change since the last round recorded as a scale event at now; an active pa's history is
// returned unchanged (its own rescales are recorded when made).
func observedHistory(pa *podpilotv1alpha1.PodAutoscaler, e remembered, b *normalize.Behavior, current int32,
	now time.Time) normalize.History {
	if !dryRun(pa) || e.Replicas == 0 || current == 0 {
		return e.History
	}
	return normalize.RecordScaleEvent(e.History, b, e.Replicas, current, now)
}

// reportRescale is applyRescale for a dry-run pa: it writes nothing, emits a DryRunRescale event
// saying what it would do and sets AbleToScale to say so. It returns the history without a scale
// event and the would-be replicas as the desired replicas.
func (c *Controller) reportRescale(ctx context.Context, pa *podpilotv1alpha1.PodAutoscaler, t target,
	d decision.Decision, now time.Time) (normalize.History, int32) {
	msg := fmt.Sprintf("would scale %s from %d to %d: %s", pa.Spec.ScaleTargetName, t.specReplicas, d.DesiredReplicas, d.Reason)
	c.recorder.Eventf(pa, nil, corev1.EventTypeNormal, ReasonDryRunRescale, status.ActionScale, "%s", msg)
	status.SetCondition(pa, podpilotv1alpha1.ConditionAbleToScale, true, ReasonDryRunRescale,
		"dry run: the PodAutoscaler "+msg, now)
	klog.FromContext(ctx).V(2).Info("Dry run, not rescaling", "podAutoscaler", klog.KObj(pa), "target", t.reference,
		"from", t.specReplicas, "to", d.DesiredReplicas, "reason", d.Reason)
	return d.History, d.DesiredReplicas
}
