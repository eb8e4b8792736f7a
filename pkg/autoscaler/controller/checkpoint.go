package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/decision"
	"github.com/podpilot/podpilot/pkg/autoscaler/state"
	"github.com/podpilot/podpilot/pkg/autoscaler/status"
)

var (
	// errStatusNotWritten means a round's decision was made, and its rescale (if any) applied,
	// but its status was not written; the memory has it, and the next round writes it again.
	errStatusNotWritten = errors.New("status not written")
	// errStatusBudgetSpent means a write that must come first (see markZero) found the status
	// budget spent.
	errStatusBudgetSpent = errors.New("status write budget spent")
	// errReplaced means the PodAutoscaler was deleted and created again under the same name.
	errReplaced = errors.New("PodAutoscaler was replaced")
)

// essentialChange reports whether s records something a later round or another leader needs
// from the checkpoint: a rescale, a new generation, a changed history, ScaledToZero mark or
// External metric fallback (a failure start, or its end).
func essentialChange(old, s podpilotv1alpha1.PodAutoscalerStatus, rescaled bool) bool {
	zero := func(st podpilotv1alpha1.PodAutoscalerStatus) string {
		if c := meta.FindStatusCondition(st.Conditions, podpilotv1alpha1.ConditionScaledToZero); c != nil {
			return string(c.Status)
		}
		return ""
	}
	return rescaled || old.ObservedGeneration != s.ObservedGeneration || zero(old) != zero(s) ||
		!equality.Semantic.DeepEqual(old.Recommendations, s.Recommendations) ||
		!equality.Semantic.DeepEqual(old.ScaleEvents, s.ScaleEvents) ||
		!equality.Semantic.DeepEqual(state.FallbacksOf(old), state.FallbacksOf(s))
}

// updateStatus checkpoints pa's status unless it is not visibly different from base's (the newer
// of the informer's copy and the one podpilot last wrote; see visiblyChanged). A write takes a
// token of the status budget without waiting, so a worker never waits for it: when the budget is
// spent, an essential write (see essentialChange) is handed to the status writer (processOwed),
// which waits for the budget off the workers' path, and any other is left to the next round.
func (c *Controller) updateStatus(ctx context.Context, tm *term, base, pa *podpilotv1alpha1.PodAutoscaler, rescaled bool) error {
	logger := klog.FromContext(ctx)
	if !status.VisiblyChanged(base.Status, pa.Status) {
		logger.V(5).Info("PodAutoscaler status unchanged", "podAutoscaler", klog.KObj(pa))
		return nil
	}
	if c.statusRL != nil && !c.statusRL.TryAccept() {
		if essentialChange(base.Status, pa.Status, rescaled) {
			owed := pa.Status.DeepCopy()
			tm.memory.Remember(state.ObjectRef(pa), func(e *remembered) { e.Owed = owed })
			tm.owed.Add(cache.MetaObjectToName(pa))
			logger.V(4).Info("Status write budget spent, the status writer writes it", "podAutoscaler", klog.KObj(pa))
			return nil
		}
		logger.V(4).Info("Status write budget spent, deferring the write to the next round", "podAutoscaler", klog.KObj(pa))
		return nil
	}
	return c.writeStatus(ctx, tm, base, pa.Status, nil)
}

// writeStatus writes status onto base, the PodAutoscaler as last stored, with one UpdateStatus.
// On a conflict it reads the stored object, merges the history checkpointed there into the
// memory (another leader may have written since base was read) and writes status with the merged
// history and the stored ScaledToZero mark where it must stand (see keepZeroMark): histories
// merge, they are never overwritten. A deferred status (owed, see processOwed) is dropped instead
// once a newer one was written: one of a newer generation, or any written since it was owed. A
// failure wraps errStatusNotWritten.
func (c *Controller) writeStatus(ctx context.Context, tm *term, base *podpilotv1alpha1.PodAutoscaler, status podpilotv1alpha1.PodAutoscalerStatus,
	owed *podpilotv1alpha1.PodAutoscalerStatus) error {
	client := c.podpilot.AutoscalingV1alpha1().PodAutoscalers(base.Namespace)
	obj := base.DeepCopy()
	obj.Status = *status.DeepCopy()
	superseded := false
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		written, err := client.UpdateStatus(ctx, obj, metav1.UpdateOptions{})
		if err == nil {
			tm.memory.Checkpoint(written, obj.ResourceVersion)
			return nil
		}
		if !apierrors.IsConflict(err) {
			return err
		}
		stored, getErr := client.Get(ctx, obj.Name, metav1.GetOptions{})
		switch {
		case getErr != nil:
			return getErr
		case stored.UID != obj.UID:
			return errReplaced
		case owed != nil && (!state.Owes(tm.memory, stored, owed) || stored.Status.ObservedGeneration > status.ObservedGeneration):
			superseded = true
			return nil
		}
		merged := state.Merge(tm.memory, stored, c.lastRound(stored))
		theirs := stored.Status
		obj = stored
		obj.Status = *status.DeepCopy()
		state.PersistHistory(&obj.Status, merged)
		if keepZeroMark(&obj.Status, theirs) {
			tm.memory.Remember(state.ObjectRef(stored), func(e *remembered) { e.ZeroKnown, e.Zero = true, true })
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("update status of PodAutoscaler %s/%s: %w: %w", base.Namespace, base.Name, errStatusNotWritten, err)
	}
	if superseded {
		klog.FromContext(ctx).V(4).Info("Deferred status superseded by a newer one, dropped", "podAutoscaler", klog.KObj(base))
		return nil
	}
	klog.FromContext(ctx).V(4).Info("Updated PodAutoscaler status", "podAutoscaler", klog.KObj(obj),
		"currentReplicas", status.CurrentReplicas, "desiredReplicas", status.DesiredReplicas)
	return nil
}

// lastRound is when the round before this one ran, as a leader reading a checkpoint dates the
// newest run's end (see normalize.FromCheckpoint): one of pa's sync periods ago.
func (c *Controller) lastRound(pa *podpilotv1alpha1.PodAutoscaler) time.Time {
	return c.clock.Now().Add(-c.syncPeriodOf(pa))
}

// processOwed writes the next status the status budget deferred, once the budget allows: it is
// the one place that waits for the budget, and it stops waiting when ctx ends (the Lease lost).
// A failed write is retried with backoff until a round writes a newer status. It returns false
// when the queue is shut down.
func (c *Controller) processOwed(ctx context.Context, tm *term) bool {
	key, shutdown := tm.owed.Get()
	if shutdown {
		return false
	}
	defer tm.owed.Done(key)
	ctx, release, owned := c.claim(ctx, key)
	if !owned {
		tm.owed.Forget(key)
		return true
	}
	defer release()
	if c.statusRL != nil {
		if err := c.statusRL.Wait(ctx); err != nil {
			return true
		}
	}
	cached, err := c.paLister.PodAutoscalers(key.Namespace).Get(key.Name)
	if err != nil {
		tm.owed.Forget(key)
		return true
	}
	var owed *podpilotv1alpha1.PodAutoscalerStatus
	tm.memory.Remember(state.ObjectRef(cached), func(e *remembered) { owed = e.Owed })
	base := state.Base(tm.memory, cached)
	if owed == nil || !status.VisiblyChanged(base.Status, *owed) {
		tm.owed.Forget(key)
		return true
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.roundTimeout())
	defer cancel()
	if err := c.writeStatus(ctx, tm, base, *owed, owed); err != nil {
		klog.FromContext(ctx).V(2).Info("Deferred status write failed, retrying", "podAutoscaler", klog.KRef(key.Namespace, key.Name), "err", err)
		tm.owed.AddRateLimited(key)
		return true
	}
	tm.owed.Forget(key)
	return true
}

// checkpointBefore writes, before a rescale, what the next leader needs to tell the rescale's
// outcome apart whatever becomes of the writes after it (a status write lost, a leader that dies
// first): a PodAutoscaler's first checkpoint when it has none yet (the target's replicas before
// the rescale as desiredReplicas, see state.ObservedSinceCheckpoint), and the ScaledToZero mark before
// a scale to zero podpilot will hold, so that podpilot finds the zero to be its own and scales
// the target back up. It takes a status budget token without waiting; when the budget is spent,
// or the write fails, the rescale waits for the next round (errStatusNotWritten).
func (c *Controller) checkpointBefore(ctx context.Context, tm *term, base *podpilotv1alpha1.PodAutoscaler, t target, d decision.Decision, now time.Time) error {
	first, zero := base.Status.ObservedGeneration == 0, d.HoldsAtZero && !zeroMarked(base)
	if !first && !zero {
		return nil
	}
	if c.statusRL != nil && !c.statusRL.TryAccept() {
		return fmt.Errorf("checkpoint PodAutoscaler %s/%s before its rescale: %w: %w", base.Namespace, base.Name, errStatusNotWritten, errStatusBudgetSpent)
	}
	marked := base.DeepCopy()
	if first {
		marked.Status.ObservedGeneration = marked.Generation
		marked.Status.CurrentReplicas, marked.Status.DesiredReplicas = t.specReplicas, t.specReplicas
	}
	if zero {
		status.SetDecisionConditions(marked, []decision.Condition{d.ScaledToZeroCondition()}, now)
	}
	return c.writeStatus(ctx, tm, base, marked.Status, nil)
}

// keepZeroMark sets s's ScaledToZero condition to stored's when stored marks a zero that s would
// unmark while its target is still at zero (a writer that read a cache without the mark): True
// wins, since a zero left unmarked is never scaled back up. It reports whether it did.
func keepZeroMark(s *podpilotv1alpha1.PodAutoscalerStatus, stored podpilotv1alpha1.PodAutoscalerStatus) bool {
	mark := meta.FindStatusCondition(stored.Conditions, podpilotv1alpha1.ConditionScaledToZero)
	if mark == nil || mark.Status != metav1.ConditionTrue || s.CurrentReplicas != 0 ||
		meta.IsStatusConditionTrue(s.Conditions, podpilotv1alpha1.ConditionScaledToZero) {
		return false
	}
	meta.SetStatusCondition(&s.Conditions, *mark)
	return true
}

// zeroMarked reports whether pa's status carries the ScaledToZero mark.
func zeroMarked(pa *podpilotv1alpha1.PodAutoscaler) bool {
	return meta.IsStatusConditionTrue(pa.Status.Conditions, podpilotv1alpha1.ConditionScaledToZero)
}

// setZeroMark sets pa's ScaledToZero condition to what the memory knows, once it knows it: so a
// round writes it again when the write after the rescale that set it was lost.
func setZeroMark(pa *podpilotv1alpha1.PodAutoscaler, e remembered, now time.Time) {
	if e.ZeroKnown {
		status.SetDecisionConditions(pa, []decision.Condition{decision.Decision{HoldsAtZero: e.Zero}.ScaledToZeroCondition()}, now)
	}
}
