package controller

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/decision"
)

// setCondition sets one condition at now; its transition time changes only with its status.
func setCondition(pa *podpilotv1alpha1.PodAutoscaler, typ string, ok bool, reason, message string, now time.Time) {
	status := metav1.ConditionFalse
	if ok {
		status = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&pa.Status.Conditions, metav1.Condition{
		Type: typ, Status: status, Reason: reason, Message: truncateMessage(message, maxConditionMessage),
		ObservedGeneration: pa.Generation, LastTransitionTime: metav1.NewTime(now),
	})
}

// setDecisionConditions sets the conditions the decision determined; the others keep their values.
func setDecisionConditions(pa *podpilotv1alpha1.PodAutoscaler, conds []decision.Condition, now time.Time) {
	for _, c := range conds {
		setCondition(pa, string(c.Type), c.Status, c.Reason, c.Message, now)
	}
}

// sourceTypeOf is the status type of a decision's metric kind.
func sourceTypeOf(k decision.MetricKind) podpilotv1alpha1.MetricSourceType {
	switch k {
	case decision.ResourceMetric:
		return podpilotv1alpha1.ResourceMetricSourceType
	case decision.ObjectMetric:
		return podpilotv1alpha1.ObjectMetricSourceType
	case decision.ExternalMetric:
		return podpilotv1alpha1.ExternalMetricSourceType
	case decision.ContainerResourceMetric:
		return podpilotv1alpha1.ContainerResourceMetricSourceType
	}
	return podpilotv1alpha1.CustomMetricSourceType
}

// maxTargetsLength is the schema's bound of status.targets; with every metric list at its bound
// the rendered list can pass it, and is then cut.
const maxTargetsLength = 1024

// MetricChangeTolerance is the relative change of a metric's current value (averageValue or
// averageUtilization) below which the value alone does not rewrite the status: such a change is
// noise to a reader, and writing it every round would cost one API write per autoscaler per round.
const MetricChangeTolerance = 0.05

// visiblyChanged reports whether s differs from old in something a reader can see: any field, except
// that currentMetrics (and targets, rendered from them) count only when a metric appeared,
// disappeared or moved by more than MetricChangeTolerance.
func visiblyChanged(old, s podpilotv1alpha1.PodAutoscalerStatus) bool {
	if metricsClose(old.CurrentMetrics, s.CurrentMetrics) && sameTargetValues(old.Targets, s.Targets) {
		s.CurrentMetrics, s.Targets = old.CurrentMetrics, old.Targets
	}
	return !equality.Semantic.DeepEqual(old, s)
}

// sameTargetValues reports whether two targets strings ("current/target, ...") show the same
// targets, whatever their current values.
func sameTargetValues(a, b string) bool {
	pa, pb := strings.Split(a, ", "), strings.Split(b, ", ")
	if len(pa) != len(pb) {
		return false
	}
	for i := range pa {
		_, ta, _ := strings.Cut(pa[i], "/")
		_, tb, _ := strings.Cut(pb[i], "/")
		if ta != tb {
			return false
		}
	}
	return true
}

// metricsClose reports whether two currentMetrics lists name the same metrics with values within
// MetricChangeTolerance of each other.
func metricsClose(old, cur []podpilotv1alpha1.MetricStatus) bool {
	if len(old) != len(cur) {
		return false
	}
	for i := range old {
		o, c := old[i], cur[i]
		if o.Type != c.Type || o.Name != c.Name || o.Container != c.Container || o.DescribedObject != c.DescribedObject ||
			!quantityClose(o.AverageValue, c.AverageValue) || !quantityClose(o.Value, c.Value) {
			return false
		}
		if (o.AverageUtilization == nil) != (c.AverageUtilization == nil) ||
			(o.AverageUtilization != nil && !within(float64(*o.AverageUtilization), float64(*c.AverageUtilization))) {
			return false
		}
	}
	return true
}

// quantityClose reports whether two optional values are both unset, or both set and within
// MetricChangeTolerance of each other.
func quantityClose(old, cur *resource.Quantity) bool {
	if old == nil || cur == nil {
		return old == cur
	}
	return within(old.AsApproximateFloat64(), cur.AsApproximateFloat64())
}

// within reports whether cur is within MetricChangeTolerance of old, relative to old.
func within(old, cur float64) bool {
	return math.Abs(cur-old) <= MetricChangeTolerance*math.Abs(old)
}

// updateStatus writes pa's status once, unless it is not visibly different from old's (see
// visiblyChanged). A write that records a rescale (rescaled), a new recommendation or a new
// generation waits for the status budget; any other is deferred to the next round when the budget
// is spent. On a conflict it re-reads the object and applies the same status again.
func (c *Controller) updateStatus(ctx context.Context, old, pa *podpilotv1alpha1.PodAutoscaler, rescaled bool) error {
	logger := klog.FromContext(ctx)
	if !visiblyChanged(old.Status, pa.Status) {
		logger.V(5).Info("PodAutoscaler status unchanged", "podAutoscaler", klog.KObj(pa))
		return nil
	}
	if c.statusRL != nil {
		essential := rescaled || old.Status.ObservedGeneration != pa.Status.ObservedGeneration ||
			!equality.Semantic.DeepEqual(old.Status.Recommendations, pa.Status.Recommendations)
		switch {
		case essential:
			if err := c.statusRL.Wait(ctx); err != nil {
				return fmt.Errorf("wait for the status write budget of PodAutoscaler %s/%s: %w", pa.Namespace, pa.Name, err)
			}
		case !c.statusRL.TryAccept():
			logger.V(4).Info("Status write budget spent, deferring the write to the next round", "podAutoscaler", klog.KObj(pa))
			return nil
		}
	}
	client := c.podpilot.AutoscalingV1alpha1().PodAutoscalers(pa.Namespace)
	obj := pa
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if obj == nil {
			fresh, err := client.Get(ctx, pa.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			fresh.Status = pa.Status
			obj = fresh
		}
		_, err := client.UpdateStatus(ctx, obj, metav1.UpdateOptions{})
		obj = nil
		return err
	})
	if err != nil {
		return fmt.Errorf("update status of PodAutoscaler %s/%s: %w", pa.Namespace, pa.Name, err)
	}
	logger.V(4).Info("Updated PodAutoscaler status", "podAutoscaler", klog.KObj(pa),
		"currentReplicas", pa.Status.CurrentReplicas, "desiredReplicas", pa.Status.DesiredReplicas)
	return nil
}
