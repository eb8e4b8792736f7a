package controller

import (
	compbasemetrics "k8s.io/component-base/metrics"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/decision"
	"github.com/podpilot/podpilot/pkg/autoscaler/replicas"
	"github.com/podpilot/podpilot/pkg/autoscaler/telemetry"
)

// Metrics records the autoscaler's own metrics (see telemetry.Metrics). Create it with NewMetrics
// and pass it in Config.Metrics; a nil *Metrics records nothing.
type Metrics = telemetry.Metrics

// specErrors are the errors in a PodAutoscaler's spec or its target's: a sync failing with one
// counts as error="spec" in the reconciliation metrics, any other as "internal", as upstream's.
var specErrors = []error{podpilotv1alpha1.ErrUnsupportedScaleTargetKind, ErrNoSelector,
	decision.ErrNoMetricSpecs, decision.ErrUnknownMetricKind, replicas.ErrInvalidTarget, ErrAmbiguousScaleTarget}

// NewMetrics creates the autoscaler's metrics and registers them on r. The per-PodAutoscaler
// series are registered by New, which has the informer they are read from.
func NewMetrics(r compbasemetrics.KubeRegistry) (*Metrics, error) {
	return telemetry.New(r, specErrors...)
}
