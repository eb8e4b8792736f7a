package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/decision"
	"github.com/podpilot/podpilot/pkg/autoscaler/normalize"
	"github.com/podpilot/podpilot/pkg/autoscaler/specconv"
)

// sync runs one round for the PodAutoscaler key: read the target, its pods and the metrics,
// decide, write the scale, then the status. A missing target is a condition and an event, not
// an error; failed metrics reach the decision, which never scales down on them.
func (c *Controller) sync(ctx context.Context, key cache.ObjectName) (err error) {
	logger := klog.FromContext(ctx)
	shared, err := c.paLister.PodAutoscalers(key.Namespace).Get(key.Name)
	if apierrors.IsNotFound(err) {
		logger.V(4).Info("PodAutoscaler is gone", "podAutoscaler", klog.KRef(key.Namespace, key.Name))
		return nil
	}
	if err != nil {
		return fmt.Errorf("get PodAutoscaler %s: %w", key, err)
	}
	rec := c.metrics.reconcile(c.clock)
	defer rec.done(&err)
	pa := shared.DeepCopy()
	now := c.clock.Now()
	pa.Status.ObservedGeneration = pa.Generation
	pa.Status.Reference, _ = pa.TargetReference()
	pa.Status.Mode = modeOf(pa)

	t, err := c.resolveTarget(pa)
	if err != nil {
		rec.failed(err)
		c.recorder.Eventf(pa, nil, corev1.EventTypeWarning, ReasonFailedGetScale, actionGetScale, "%s", err.Error())
		setCondition(pa, podpilotv1alpha1.ConditionAbleToScale, false, ReasonFailedGetScale,
			"the PodAutoscaler controller was unable to get the target's current scale: "+err.Error(), now)
		pa.Status.Targets = targetsOf(pa, nil)
		return c.updateStatus(ctx, shared, pa, false)
	}
	setCondition(pa, podpilotv1alpha1.ConditionAbleToScale, true, ReasonSucceededGetScale,
		"the PodAutoscaler controller was able to get the target's current scale", now)
	if refused, err := c.refuseIfAmbiguous(ctx, shared, pa, t, rec, now); refused || err != nil {
		return err
	}
	pods, err := c.podsOfTarget(pa.Namespace, t)
	if err != nil {
		return fmt.Errorf("list pods of %s in namespace %s: %w", t.reference, pa.Namespace, err)
	}
	c.reportOverlap(shared, pa, t, pods, now)

	in := decision.Input{
		SpecReplicas: t.specReplicas, StatusReplicas: t.statusReplicas,
		MinReplicas: pa.Spec.MinReplicasOrDefault(), MaxReplicas: pa.Spec.MaxReplicas,
		Pods: podsOf(pods.own), Metrics: c.metricsOf(ctx, pa, rec), Behavior: specconv.Behavior(pa.Spec.Behavior),
		History: historyOf(pa.Status), Config: c.opts.decisionConfig(), Now: now,
		ScaledToZero: meta.IsStatusConditionTrue(pa.Status.Conditions, podpilotv1alpha1.ConditionScaledToZero),
	}
	in.History = observedHistory(pa, in.History, in.Behavior, t.specReplicas, now)
	d := decision.Decide(in)
	c.recordMetricFailures(pa, d.Statuses)
	setDecisionConditions(pa, d.Conditions, now)
	history, desired, rescaleErr := d.History, d.DesiredReplicas, error(nil)
	if d.Rescale && dryRun(pa) {
		history, desired = c.reportRescale(ctx, pa, t, d, now)
	} else if d.Rescale {
		history, desired, rescaleErr = c.applyRescale(ctx, pa, t, d, in.Behavior, now)
		if errors.Is(rescaleErr, errStaleTarget) {
			return rescaleErr
		}
	}
	rec.decided(d, t.specReplicas, rescaleErr)

	pa.Status.CurrentReplicas, pa.Status.DesiredReplicas = t.specReplicas, desired
	pa.Status.CurrentMetrics = metricStatuses(d.Statuses)
	pa.Status.Targets = targetsOf(pa, d.Statuses)
	persistHistory(&pa.Status, history)
	return errors.Join(rescaleErr, c.updateStatus(ctx, shared, pa, d.Rescale))
}

// applyRescale writes d's replicas to the target's scale and returns the history with the
// scale event and the desired replicas to show; on failure it sets AbleToScale False and keeps
// the previous desired replicas, as upstream.
func (c *Controller) applyRescale(ctx context.Context, pa *podpilotv1alpha1.PodAutoscaler, t target, d decision.Decision,
	b *normalize.Behavior, now time.Time) (normalize.History, int32, error) {
	err := c.rescale(ctx, pa, t, d.DesiredReplicas)
	if errors.Is(err, errStaleTarget) {
		return d.History, pa.Status.DesiredReplicas, err
	}
	c.recordRescale(pa, d.DesiredReplicas, d.Reason, err)
	if err != nil {
		setCondition(pa, podpilotv1alpha1.ConditionAbleToScale, false, ReasonFailedUpdateScale,
			"the PodAutoscaler controller was unable to update the target scale: "+err.Error(), now)
		return d.History, pa.Status.DesiredReplicas, err
	}
	setCondition(pa, podpilotv1alpha1.ConditionAbleToScale, true, ReasonSucceededRescale,
		fmt.Sprintf("the PodAutoscaler controller was able to update the target scale to %d", d.DesiredReplicas), now)
	pa.Status.LastScaleTime = ptrTime(now)
	setDecisionConditions(pa, []decision.Condition{d.ScaledToZeroCondition()}, now)
	klog.FromContext(ctx).V(2).Info("Rescaled", "podAutoscaler", klog.KObj(pa), "target", t.reference,
		"from", t.specReplicas, "to", d.DesiredReplicas, "reason", d.Reason)
	return normalize.RecordScaleEvent(d.History, b, t.specReplicas, d.DesiredReplicas, now), d.DesiredReplicas, nil
}

func ptrTime(t time.Time) *metav1.Time {
	mt := metav1.NewTime(t)
	return &mt
}
