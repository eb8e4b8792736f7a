package controller

import (
	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/decision"
	"github.com/podpilot/podpilot/pkg/autoscaler/prediction"
	"github.com/podpilot/podpilot/pkg/autoscaler/state"
	"github.com/podpilot/podpilot/pkg/autoscaler/status"
)

// explainDecision records in pa's status what the round's forecast did and how its decision was
// made (status.prediction, PredictionActive, status.lastDecision); the forecasts' accuracy is
// kept in the term's memory of pa.
func (c *Controller) explainDecision(tm *term, base, pa *podpilotv1alpha1.PodAutoscaler, pr prediction.Round, in decision.Input, d decision.Decision) {
	remember := func(change func(*prediction.Accuracies)) {
		tm.memory.Remember(state.ObjectRef(pa), func(e *remembered) { change(&e.Concerns.accuracy) })
	}
	prediction.Record(remember, base, pa, pr, in.Metrics, d, in.Now, c.syncPeriodOf(pa))
	status.RecordLastDecision(base, pa, d, in.SpecReplicas, in.Now)
}
