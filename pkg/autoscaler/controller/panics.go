package controller

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/state"
	"github.com/podpilot/podpilot/pkg/autoscaler/status"
)

// ReasonInternalError is the ScalingActive reason, and the Warning event, of a round that
// panicked: a bug in podpilot, not in the PodAutoscaler. The round fails for that object only;
// its replicas are held and it is retried, rate limited.
const ReasonInternalError = "InternalError"

// actionReconcile is the action of the InternalError event.
const actionReconcile = "Reconcile"

// errRoundPanicked means a round panicked; the panic and its stack are in the log.
var errRoundPanicked = errors.New("internal error: the round panicked")

// syncRecovering runs one round for key and turns a panic inside it into errRoundPanicked for
// that PodAutoscaler alone, so that one object's round never takes the process (and the metrics
// APIs it serves) down: see roundPanicked.
func (c *Controller) syncRecovering(ctx context.Context, tm *term, key cache.ObjectName) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = c.roundPanicked(ctx, tm, key, r, debug.Stack())
		}
	}()
	return c.sync(ctx, key)
}

// roundPanicked handles a round of key that panicked with r: it logs the panic with its stack,
// counts it, and tells the PodAutoscaler's reader with ScalingActive False InternalError and a
// Warning event. It writes no scale: what the round did not write stays as it was. It returns
// errRoundPanicked, for a rate-limited requeue.
func (c *Controller) roundPanicked(ctx context.Context, tm *term, key cache.ObjectName, r any, stack []byte) error {
	ref := klog.KRef(key.Namespace, key.Name)
	klog.FromContext(ctx).Error(fmt.Errorf("%w: %v", errRoundPanicked, r), "PodAutoscaler round panicked; its replicas are held and the round is retried",
		"podAutoscaler", ref, "stack", string(stack))
	c.metrics.RoundPanicked()
	err := fmt.Errorf("round of PodAutoscaler %s: %w: %v", key, errRoundPanicked, r)
	if werr := c.reportPanic(ctx, tm, key); werr != nil {
		return errors.Join(err, werr)
	}
	return err
}

// reportPanic sets ScalingActive False InternalError on key's PodAutoscaler, writes its status
// and records a Warning event. A panic while doing so is logged and returned as an error.
func (c *Controller) reportPanic(ctx context.Context, tm *term, key cache.ObjectName) (err error) {
	defer func() {
		if r := recover(); r != nil {
			klog.FromContext(ctx).Error(fmt.Errorf("%w: %v", errRoundPanicked, r), "Reporting a panicked round panicked",
				"podAutoscaler", klog.KRef(key.Namespace, key.Name), "stack", string(debug.Stack()))
			err = fmt.Errorf("report the panicked round of %s: %w", key, errRoundPanicked)
		}
	}()
	shared, err := c.paLister.PodAutoscalers(key.Namespace).Get(key.Name)
	if err != nil {
		return fmt.Errorf("get PodAutoscaler %s: %w", key, err)
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.roundTimeout())
	defer cancel()
	const msg = "an internal error happened in podpilot's round for this PodAutoscaler (a panic, logged with its stack); " +
		"its replicas are held and the round is retried"
	base := state.Base(tm.memory, shared)
	pa := shared.DeepCopy()
	pa.Status = *base.Status.DeepCopy()
	status.SetCondition(pa, podpilotv1alpha1.ConditionScalingActive, false, ReasonInternalError, msg, c.clock.Now())
	c.recorder.Eventf(pa, nil, corev1.EventTypeWarning, ReasonInternalError, actionReconcile, msg)
	return c.updateStatus(ctx, tm, base, pa, false)
}
