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
	"github.com/podpilot/podpilot/pkg/autoscaler/state"
	"github.com/podpilot/podpilot/pkg/autoscaler/status"
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
		tm.memory.Forget(state.NameRef(key))
		logger.V(4).Info("PodAutoscaler is gone", "podAutoscaler", klog.KRef(key.Namespace, key.Name))
		return nil
	}
	if err != nil {
		return fmt.Errorf("get PodAutoscaler %s: %w", key, err)
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.roundTimeout())
	defer cancel()
	rec := c.metrics.Reconcile(c.clock)
	defer rec.Done(&err)
	now := c.clock.Now()
	mem, err := c.recall(ctx, tm, shared)
	if err != nil {
		return err
	}
	base := state.Base(tm.memory, shared)
	pa := shared.DeepCopy()
	pa.Status = *base.Status.DeepCopy()
	pa.Status.ObservedGeneration = pa.Generation
	pa.Status.Reference, _ = pa.TargetReference()
	pa.Status.Mode = modeOf(pa)
	setZeroMark(pa, mem, now)

	t, err := c.resolveTarget(pa)
	if err != nil {
		rec.Failed(err)
		c.recorder.Eventf(pa, nil, corev1.EventTypeWarning, status.ReasonFailedGetScale, status.ActionGetScale, "%s", err.Error())
		status.SetCondition(pa, podpilotv1alpha1.ConditionAbleToScale, false, status.ReasonFailedGetScale,
			"the PodAutoscaler controller was unable to get the target's current scale: "+err.Error(), now)
		pa.Status.Targets = status.TargetsOf(pa, nil)
		return c.updateStatus(ctx, tm, base, pa, false)
	}
	status.SetCondition(pa, podpilotv1alpha1.ConditionAbleToScale, true, status.ReasonSucceededGetScale,
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
		Config: c.opts.decisionConfig(), Now: now, ScaledToZero: mem.Zero, Floor: c.scheduleFloor(tm, base, pa, now),
	}
	in.Metrics = state.WithFailureStarts(in.Metrics, mem.Fallbacks)
	if in.History, err = c.knownHistory(ctx, tm, pa, mem, in.Behavior, t, now); err != nil {
		return err
	}
	pr := c.models.Forecast(ctx, pa, pods.own, in.Metrics, now, c.syncPeriodOf(pa))
	in.Forecast = pr.Input()
	d := holdBack(tm, pa, decision.Decide(in), t.specReplicas, now)
	c.explainDecision(tm, base, pa, pr, in, d)
	status.RecordMetricFailures(c.recorder, pa, d.Statuses)
	status.SetDecisionConditions(pa, d.Conditions, now)
	fallbacks := c.fallbacks(tm, pa, mem, in.Metrics, now)
	r := rescaled{history: d.History, desired: d.DesiredReplicas}
	if d.Rescale && dryRun(pa) {
		r.history, r.desired = c.reportRescale(ctx, pa, t, d, now)
	} else if d.Rescale {
		r = c.applyRescale(ctx, tm, base, pa, t, d, in.Behavior, now)
		if errors.Is(r.err, errStaleTarget) {
			return r.err
		}
	}
	rec.Decided(d, t.specReplicas, r.err)
	c.remember(tm, pa, t, d, r, now)
	logDecision(ctx, pa, t, d, in.Metrics)

	pa.Status.CurrentReplicas, pa.Status.DesiredReplicas = t.specReplicas, r.desired
	pa.Status.CurrentMetrics = status.MetricStatuses(d.Statuses)
	state.PersistFallbacks(&pa.Status, fallbacks)
	pa.Status.Targets = status.TargetsOf(pa, d.Statuses)
	state.PersistHistory(&pa.Status, r.history)
	statusErr := c.updateStatus(ctx, tm, base, pa, r.applied || r.uncertain)
	if r.err != nil {
		return errors.Join(r.err, statusErr)
	}
	return statusErr
}

// recall returns what the term knows of shared, the informer's copy of a PodAutoscaler. The
// first time, it seeds the memory from the PodAutoscaler as stored (a quorum read), not from the
// cache, which may lag behind the last term's latest writes (a ScaledToZero mark, a scale event):
// the stored copy is then the base of the round's writes until the cache moves past it.
func (c *Controller) recall(ctx context.Context, tm *term, shared *podpilotv1alpha1.PodAutoscaler) (remembered, error) {
	if state.Known(tm.memory, shared) {
		return tm.memory.Recall(shared, c.lastRound(shared)), nil
	}
	stored, err := c.podpilot.AutoscalingV1alpha1().PodAutoscalers(shared.Namespace).Get(ctx, shared.Name, metav1.GetOptions{})
	if err != nil {
		return remembered{}, fmt.Errorf("get PodAutoscaler %s/%s: %w", shared.Namespace, shared.Name, err)
	}
	if stored.UID != shared.UID {
		return remembered{}, fmt.Errorf("PodAutoscaler %s/%s: %w", shared.Namespace, shared.Name, errReplaced)
	}
	mem := tm.memory.Recall(stored, c.lastRound(stored))
	if stored.ResourceVersion != shared.ResourceVersion {
		tm.memory.Checkpoint(stored, shared.ResourceVersion)
	}
	return mem, nil
}

// knownHistory returns the history this round decides from: the remembered one with the target's
// changes podpilot did not record itself: for a dry-run PodAutoscaler the target's change since
// the last round (see observedHistory); for an active one, at the term's first round, the change
// since the checkpoint and the target's replicas as a recommendation (see
// state.ObservedSinceCheckpoint), read from the target as stored: a cache that lags at the term's start
// would hide the last term's latest rescale for good.
func (c *Controller) knownHistory(ctx context.Context, tm *term, pa *podpilotv1alpha1.PodAutoscaler, mem remembered, b *normalize.Behavior,
	t target, now time.Time) (normalize.History, error) {
	if dryRun(pa) {
		return observedHistory(pa, mem, b, t.specReplicas, now), nil
	}
	if mem.Checked {
		return mem.History, nil
	}
	scale, err := c.scaler(t, pa.Namespace).GetScale(ctx, pa.Spec.ScaleTargetName, metav1.GetOptions{})
	if err != nil {
		return mem.History, fmt.Errorf("get scale of %s in namespace %s: %w", t.reference, pa.Namespace, err)
	}
	current := scale.Spec.Replicas
	h, _ := state.ObservedSinceCheckpoint(mem, mem.History, b, current, now)
	held := state.SeededHold(b, mem.History, mem.CheckpointDesired, current, now)
	tm.memory.Remember(state.ObjectRef(pa), func(e *remembered) { e.History, e.Checked, e.Hold = h, true, held })
	return h, nil
}

// holdBack returns d without its rescale while the memory holds its direction back (see state.Hold);
// a target outside [minReplicas, maxReplicas] is brought back at once, as upstream.
func holdBack(tm *term, pa *podpilotv1alpha1.PodAutoscaler, d decision.Decision, current int32, now time.Time) decision.Decision {
	if current < pa.Spec.MinReplicasOrDefault() || current > pa.Spec.MaxReplicas {
		return d
	}
	var h state.Hold
	tm.memory.Remember(state.ObjectRef(pa), func(e *remembered) { h = e.Hold })
	if d.Rescale && h.Holds(current, d.DesiredReplicas, now) {
		d.Rescale, d.DesiredReplicas, d.Reason = false, current, ""
	}
	return d
}

// rescaled is what a round's rescale left: the history to remember, the desired replicas to
// show, whether a scale was written, whether a failed write may have landed (see mayHaveLanded)
// and the error that kept it from being written.
type rescaled struct {
	history   normalize.History
	desired   int32
	applied   bool
	uncertain bool
	err       error
}

// errRescaleFailed means the round's rescale was not written (or its outcome is unknown): the
// next round, one sync period later, decides again; a failed write is never retried sooner.
var errRescaleFailed = errors.New("rescale failed")

// applyRescale writes d's replicas to the target's scale and returns the history with the
// scale event and the desired replicas to show; on failure it sets AbleToScale False and keeps
// the previous desired replicas, as upstream. What a later leader needs to know about the
// rescale is checkpointed first (see checkpointBefore). A write that failed but may have landed
// (see mayHaveLanded) is recorded in the history as if it landed: no later round, whatever cache
// of the target it reads, lets a policy or a window forget it; if it did not land, the policies
// hold for at most one period longer.
func (c *Controller) applyRescale(ctx context.Context, tm *term, base, pa *podpilotv1alpha1.PodAutoscaler, t target, d decision.Decision,
	b *normalize.Behavior, now time.Time) rescaled {
	failed := rescaled{history: d.History, desired: pa.Status.DesiredReplicas}
	err := c.checkpointBefore(ctx, tm, base, t, d, now)
	sent := err == nil // a rescale waiting for its checkpoint was never sent
	if sent {
		err = c.rescale(ctx, pa, t, d.DesiredReplicas)
	}
	if errors.Is(err, errStaleTarget) { // decided on a stale target: only the recommendation stands
		tm.memory.Remember(state.ObjectRef(pa), func(e *remembered) { e.History = d.History })
		failed.err = err
		return failed
	}
	status.RecordRescale(c.recorder, pa, d.DesiredReplicas, d.Reason, err)
	if err != nil {
		status.SetCondition(pa, podpilotv1alpha1.ConditionAbleToScale, false, status.ReasonFailedUpdateScale,
			"the PodAutoscaler controller was unable to update the target scale: "+err.Error(), now)
		if sent && mayHaveLanded(err) {
			failed.history = normalize.RecordScaleEvent(d.History, b, t.specReplicas, d.DesiredReplicas, now)
			failed.uncertain = true
			klog.FromContext(ctx).V(2).Info("Rescale may have landed, counting it", "podAutoscaler", klog.KObj(pa),
				"target", t.reference, "from", t.specReplicas, "to", d.DesiredReplicas, "err", err)
		}
		failed.err = fmt.Errorf("%w: %w", errRescaleFailed, err)
		return failed
	}
	status.SetCondition(pa, podpilotv1alpha1.ConditionAbleToScale, true, status.ReasonSucceededRescale,
		fmt.Sprintf("the PodAutoscaler controller was able to update the target scale to %d", d.DesiredReplicas), now)
	pa.Status.LastScaleTime = ptrTime(now)
	status.SetDecisionConditions(pa, []decision.Condition{d.ScaledToZeroCondition()}, now)
	klog.FromContext(ctx).V(2).Info("Rescaled", "podAutoscaler", klog.KObj(pa), "target", t.reference,
		"from", t.specReplicas, "to", d.DesiredReplicas, "reason", d.Reason)
	return rescaled{history: normalize.RecordScaleEvent(d.History, b, t.specReplicas, d.DesiredReplicas, now),
		desired: d.DesiredReplicas, applied: true}
}

// mayHaveLanded reports whether a write that failed with err may still have been applied: any
// failure but an answer by which the API server refused the write before applying it (a 4xx
// such as Invalid, Forbidden, Conflict or NotFound). A timeout, the round's deadline, a lost
// connection (EOF, reset) or a 5xx (etcdserver: request timed out) may all follow the write's
// commit.
func mayHaveLanded(err error) bool {
	refused := apierrors.IsBadRequest(err) || apierrors.IsInvalid(err) || apierrors.IsForbidden(err) ||
		apierrors.IsUnauthorized(err) || apierrors.IsNotFound(err) || apierrors.IsConflict(err) ||
		apierrors.IsMethodNotSupported(err) || apierrors.IsNotAcceptable(err) || apierrors.IsUnsupportedMediaType(err) ||
		apierrors.IsRequestEntityTooLargeError(err) || apierrors.IsTooManyRequests(err) || apierrors.IsGone(err) ||
		apierrors.IsAlreadyExists(err)
	return !refused
}

// remember records the round's outcome in the memory before anything is written to the status:
// the history, the ScaledToZero mark after a rescale, the target's replicas, and the time of a
// rescale (see rescaleGap). A rescale that may have landed counts as made, and a scale to a zero
// podpilot holds marks the zero (True wins: if the write did not land, the mark is harmless
// above zero, while a zero left unmarked would strand the target).
func (c *Controller) remember(tm *term, pa *podpilotv1alpha1.PodAutoscaler, t target, d decision.Decision, r rescaled, now time.Time) {
	tm.memory.Remember(state.ObjectRef(pa), func(e *remembered) {
		e.History, e.Replicas = r.history, t.specReplicas
		switch {
		case r.applied:
			e.ZeroKnown, e.Zero, e.LastRescale = true, d.HoldsAtZero, now
		case r.uncertain:
			e.LastRescale = now
			e.Hold = e.Hold.After(specconv.Behavior(pa.Spec.Behavior), t.specReplicas, d.DesiredReplicas, now)
			if d.HoldsAtZero {
				e.ZeroKnown, e.Zero = true, true
			}
		}
	})
}

func ptrTime(t time.Time) *metav1.Time {
	mt := metav1.NewTime(t)
	return &mt
}
