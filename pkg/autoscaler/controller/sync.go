package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/decision"
	"github.com/podpilot/podpilot/pkg/autoscaler/normalize"
	"github.com/podpilot/podpilot/pkg/autoscaler/specconv"
)

// sync runs one round for the PodAutoscaler key, within one deadline (Options.roundTimeout):
// read the target, its pods and the metrics, decide from the history the leader remembers (see
// memory), write the scale, remember the outcome, then checkpoint it in the status. A missing
// target is a condition and an event, not an error; failed metrics reach the decision, which
// never scales down on them. A status that was not written returns errStatusNotWritten: the
// decision stands, and the next round writes the status again.
func (c *Controller) sync(ctx context.Context, key cache.ObjectName) (err error) {
	logger := klog.FromContext(ctx)
	tm := c.term.Load()
	shared, err := c.paLister.PodAutoscalers(key.Namespace).Get(key.Name)
	if apierrors.IsNotFound(err) {
		tm.memory.forget(key)
		logger.V(4).Info("PodAutoscaler is gone", "podAutoscaler", klog.KRef(key.Namespace, key.Name))
		return nil
	}
	if err != nil {
		return fmt.Errorf("get PodAutoscaler %s: %w", key, err)
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.roundTimeout())
	defer cancel()
	rec := c.metrics.reconcile(c.clock)
	defer rec.done(&err)
	now := c.clock.Now()
	mem := tm.memory.recall(shared, c.lastRound())
	base := tm.memory.base(shared)
	pa := shared.DeepCopy()
	pa.Status = *base.Status.DeepCopy()
	pa.Status.ObservedGeneration = pa.Generation
	pa.Status.Reference, _ = pa.TargetReference()
	pa.Status.Mode = modeOf(pa)
	setZeroMark(pa, mem, now)

	t, err := c.resolveTarget(pa)
	if err != nil {
		rec.failed(err)
		c.recorder.Eventf(pa, nil, corev1.EventTypeWarning, ReasonFailedGetScale, actionGetScale, "%s", err.Error())
		setCondition(pa, podpilotv1alpha1.ConditionAbleToScale, false, ReasonFailedGetScale,
			"the PodAutoscaler controller was unable to get the target's current scale: "+err.Error(), now)
		pa.Status.Targets = targetsOf(pa, nil)
		return c.updateStatus(ctx, tm, base, pa, false)
	}
	setCondition(pa, podpilotv1alpha1.ConditionAbleToScale, true, ReasonSucceededGetScale,
		"the PodAutoscaler controller was able to get the target's current scale", now)
	if refused, err := c.refuseIfAmbiguous(ctx, tm, base, pa, t, rec, now); refused || err != nil {
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
		Config: c.opts.decisionConfig(), Now: now, ScaledToZero: mem.zero, Floor: c.scheduleFloor(tm, base, pa, now),
	}
	in.History = c.knownHistory(tm, pa, mem, in.Behavior, t.specReplicas, now)
	pr := c.forecastRound(ctx, pa, pods.own, in.Metrics, now)
	in.Forecast = pr.input()
	d := decision.Decide(in)
	c.explainDecision(tm, base, pa, pr, in, d)
	c.recordMetricFailures(pa, d.Statuses)
	setDecisionConditions(pa, d.Conditions, now)
	r := rescaled{history: d.History, desired: d.DesiredReplicas}
	if d.Rescale && dryRun(pa) {
		r.history, r.desired = c.reportRescale(ctx, pa, t, d, now)
	} else if d.Rescale {
		r = c.applyRescale(ctx, tm, base, pa, t, d, in.Behavior, now)
		if errors.Is(r.err, errStaleTarget) {
			return r.err
		}
	}
	rec.decided(d, t.specReplicas, r.err)
	c.remember(tm, pa, t, d, r, now)
	logDecision(ctx, pa, t, d, in.Metrics)

	pa.Status.CurrentReplicas, pa.Status.DesiredReplicas = t.specReplicas, r.desired
	pa.Status.CurrentMetrics = metricStatuses(d.Statuses)
	pa.Status.Targets = targetsOf(pa, d.Statuses)
	persistHistory(&pa.Status, r.history)
	statusErr := c.updateStatus(ctx, tm, base, pa, r.applied)
	if r.err != nil {
		return errors.Join(r.err, statusErr)
	}
	return statusErr
}

// knownHistory returns the history this round decides from: the remembered one with the target's
// changes podpilot did not record itself: for a dry-run PodAutoscaler the target's change since
// the last round (see observedHistory); for an active one, the first time its target is read
// after it was seeded, the change since the checkpoint (see observedSinceCheckpoint), and a
// rescale whose outcome was unknown that the target shows landed.
func (c *Controller) knownHistory(tm *term, pa *podpilotv1alpha1.PodAutoscaler, mem remembered, b *normalize.Behavior,
	current int32, now time.Time) normalize.History {
	if dryRun(pa) {
		return observedHistory(pa, mem, b, current, now)
	}
	h := resolveUncertain(mem, mem.history, b, current)
	h, first := observedSinceCheckpoint(mem, h, b, current, now)
	if first || mem.uncertain != nil {
		tm.memory.update(pa, func(e *remembered) { e.history, e.checked, e.uncertain = h, true, nil })
	}
	return h
}

// rescaled is what a round's rescale left: the history to remember, the desired replicas to
// show, whether a scale was written and the error that kept it from being written.
type rescaled struct {
	history normalize.History
	desired int32
	applied bool
	err     error
}

// applyRescale writes d's replicas to the target's scale and returns the history with the
// scale event and the desired replicas to show; on failure it sets AbleToScale False and keeps
// the previous desired replicas, as upstream. What a later leader needs to know about the
// rescale is checkpointed first (see checkpointBefore).
func (c *Controller) applyRescale(ctx context.Context, tm *term, base, pa *podpilotv1alpha1.PodAutoscaler, t target, d decision.Decision,
	b *normalize.Behavior, now time.Time) rescaled {
	failed := rescaled{history: d.History, desired: pa.Status.DesiredReplicas}
	err := c.checkpointBefore(ctx, tm, base, t, d, now)
	if err == nil {
		err = c.rescale(ctx, pa, t, d.DesiredReplicas)
	}
	if errors.Is(err, errStaleTarget) {
		failed.err = err
		return failed
	}
	c.recordRescale(pa, d.DesiredReplicas, d.Reason, err)
	if err != nil {
		setCondition(pa, podpilotv1alpha1.ConditionAbleToScale, false, ReasonFailedUpdateScale,
			"the PodAutoscaler controller was unable to update the target scale: "+err.Error(), now)
		if uncertainOutcome(ctx, err) {
			tm.memory.update(pa, func(e *remembered) {
				e.uncertain = &rescaleAttempt{from: t.specReplicas, to: d.DesiredReplicas, at: now}
			})
		}
		failed.err = err
		return failed
	}
	setCondition(pa, podpilotv1alpha1.ConditionAbleToScale, true, ReasonSucceededRescale,
		fmt.Sprintf("the PodAutoscaler controller was able to update the target scale to %d", d.DesiredReplicas), now)
	pa.Status.LastScaleTime = ptrTime(now)
	setDecisionConditions(pa, []decision.Condition{d.ScaledToZeroCondition()}, now)
	klog.FromContext(ctx).V(2).Info("Rescaled", "podAutoscaler", klog.KObj(pa), "target", t.reference,
		"from", t.specReplicas, "to", d.DesiredReplicas, "reason", d.Reason)
	return rescaled{history: normalize.RecordScaleEvent(d.History, b, t.specReplicas, d.DesiredReplicas, now),
		desired: d.DesiredReplicas, applied: true}
}

// uncertainOutcome reports whether a failed write may still have landed: it ended without an
// answer (the round's deadline, a timeout) rather than with a refusal.
func uncertainOutcome(ctx context.Context, err error) bool {
	return ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err)
}

// remember records the round's outcome in the memory before anything is written to the status:
// the history, the ScaledToZero mark after a rescale, the target's replicas, and the time of a
// rescale (see rescaleGap).
func (c *Controller) remember(tm *term, pa *podpilotv1alpha1.PodAutoscaler, t target, d decision.Decision, r rescaled, now time.Time) {
	tm.memory.update(pa, func(e *remembered) {
		e.history, e.replicas = r.history, t.specReplicas
		if r.applied {
			e.zeroKnown, e.zero, e.lastRescale = true, d.HoldsAtZero, now
		}
	})
}

func ptrTime(t time.Time) *metav1.Time {
	mt := metav1.NewTime(t)
	return &mt
}
