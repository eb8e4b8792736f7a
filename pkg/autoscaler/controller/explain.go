package controller

import (
	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/decision"
	"github.com/podpilot/podpilot/pkg/autoscaler/status"
)

// explainDecision records in pa's status what the round's forecast did and how its decision was
// made (status.prediction, PredictionActive, status.lastDecision).
func (c *Controller) explainDecision(tm *term, base, pa *podpilotv1alpha1.PodAutoscaler, pr predictionRound, in decision.Input, d decision.Decision) {
	c.recordPrediction(tm, base, pa, pr, in.Metrics, d, in.Now)
	status.RecordLastDecision(base, pa, d, in.SpecReplicas, in.Now)
}
