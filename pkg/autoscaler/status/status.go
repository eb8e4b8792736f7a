package status

import (
	"math"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/decision"
)

// SetCondition sets one condition at now; its transition time changes only with its status.
func SetCondition(pa *podpilotv1alpha1.PodAutoscaler, typ string, ok bool, reason, message string, now time.Time) {
	status := metav1.ConditionFalse
	if ok {
		status = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&pa.Status.Conditions, metav1.Condition{
		Type: typ, Status: status, Reason: reason, Message: TruncateMessage(message, maxConditionMessage),
		ObservedGeneration: pa.Generation, LastTransitionTime: metav1.NewTime(now),
	})
}

// SetDecisionConditions sets the conditions the decision determined; the others keep their values.
func SetDecisionConditions(pa *podpilotv1alpha1.PodAutoscaler, conds []decision.Condition, now time.Time) {
	for _, c := range conds {
		SetCondition(pa, string(c.Type), c.Status, c.Reason, c.Message, now)
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

// VisiblyChanged reports whether s differs from old in something a reader can see: any field, except
// that currentMetrics (and targets, rendered from them) count only when a metric appeared,
// disappeared or moved by more than MetricChangeTolerance.
func VisiblyChanged(old, s podpilotv1alpha1.PodAutoscalerStatus) bool {
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

// metricsClose reports whether two currentMetrics lists name the same metrics, with the same
// fallback status and failure start, and values within MetricChangeTolerance of each other.
func metricsClose(old, cur []podpilotv1alpha1.MetricStatus) bool {
	if len(old) != len(cur) {
		return false
	}
	for i := range old {
		o, c := old[i], cur[i]
		if o.Type != c.Type || o.Name != c.Name || o.Container != c.Container || o.DescribedObject != c.DescribedObject ||
			o.FallbackStatus != c.FallbackStatus || !equality.Semantic.DeepEqual(o.FirstFailureTime, c.FirstFailureTime) ||
			!QuantityClose(o.AverageValue, c.AverageValue) || !QuantityClose(o.Value, c.Value) {
			return false
		}
		if (o.AverageUtilization == nil) != (c.AverageUtilization == nil) ||
			(o.AverageUtilization != nil && !within(float64(*o.AverageUtilization), float64(*c.AverageUtilization))) {
			return false
		}
	}
	return true
}

// QuantityClose reports whether two optional values are both unset, or both set and within
// MetricChangeTolerance of each other.
func QuantityClose(old, cur *resource.Quantity) bool {
	if old == nil || cur == nil {
		return old == cur
	}
	return within(old.AsApproximateFloat64(), cur.AsApproximateFloat64())
}

// within reports whether cur is within MetricChangeTolerance of old, relative to old.
func within(old, cur float64) bool {
	return math.Abs(cur-old) <= MetricChangeTolerance*math.Abs(old)
}
