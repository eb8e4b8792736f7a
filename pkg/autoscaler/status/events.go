package status

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/decision"
)

// Event and condition reasons set by the controller, named as upstream's; the metric and
// limit reasons come from the decision and normalize packages.
const (
	// ReasonSuccessfulRescale is the event of a changed replica count.
	ReasonSuccessfulRescale = "SuccessfulRescale"
	// ReasonFailedRescale is the event of a failed scale update.
	ReasonFailedRescale = "FailedRescale"
	// ReasonFailedGetScale is the event and AbleToScale reason of an unreadable scale target.
	ReasonFailedGetScale = "FailedGetScale"
	// ReasonSucceededGetScale is the AbleToScale reason of a readable scale target.
	ReasonSucceededGetScale = "SucceededGetScale"
	// ReasonSucceededRescale is the AbleToScale reason of an updated scale.
	ReasonSucceededRescale = "SucceededRescale"
	// ReasonFailedUpdateScale is the AbleToScale reason of a failed scale update.
	ReasonFailedUpdateScale = "FailedUpdateScale"
)

// Actions of the events, as events/v1 requires.
const (
	// ActionScale is the action of the rescale events.
	ActionScale = "Scale"
	// ActionGetScale is the action of the FailedGetScale event.
	ActionGetScale   = "GetScale"
	actionGetMetrics = "GetMetrics"
)

// NewRecorder returns a recorder of events on PodAutoscalers sent through b, whose scheme
// knows the podpilot types, reported by reportingController; it cuts each note to what
// events/v1 accepts. The caller starts and shuts down b.
func NewRecorder(b events.EventBroadcaster, reportingController string) (events.EventRecorder, error) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("add kubernetes types to the event scheme: %w", err)
	}
	if err := podpilotv1alpha1.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("add podpilot types to the event scheme: %w", err)
	}
	return truncatingRecorder{b.NewRecorder(scheme, reportingController)}, nil
}

// RecordMetricFailures emits one Warning per failed metric, with the metric's failure reason
// (FailedGetPodsMetric, FailedGetResourceMetric) and cause.
func RecordMetricFailures(rec events.EventRecorder, pa *podpilotv1alpha1.PodAutoscaler, statuses []decision.MetricStatus) {
	for _, s := range statuses {
		if s.Err != nil {
			rec.Eventf(pa, nil, corev1.EventTypeWarning, s.FailureReason, actionGetMetrics, "%s", s.Err.Error())
		}
	}
}

// RecordRescale emits SuccessfulRescale or FailedRescale.
func RecordRescale(rec events.EventRecorder, pa *podpilotv1alpha1.PodAutoscaler, desired int32, reason string, err error) {
	if err != nil {
		rec.Eventf(pa, nil, corev1.EventTypeWarning, ReasonFailedRescale, ActionScale,
			"New size: %d; reason: %s; error: %v", desired, reason, err)
		return
	}
	rec.Eventf(pa, nil, corev1.EventTypeNormal, ReasonSuccessfulRescale, ActionScale,
		"New size: %d; reason: %s", desired, reason)
}
