package controller

import (
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/decision"
)

// Bounds of status.lastDecision and status.prediction, the schema's.
const (
	maxForecastMetrics = 42
	maxProposals       = 44
	maxChanges         = 4
	maxProposalName    = 512
	maxChangeMessage   = 256
)

// explainDecision records in pa's status what the round's forecast did and how its decision was
// made (status.prediction, PredictionActive, status.lastDecision).
func (c *Controller) explainDecision(tm *term, base, pa *podpilotv1alpha1.PodAutoscaler, pr predictionRound, in decision.Input, d decision.Decision) {
	c.recordPrediction(tm, base, pa, pr, in.Metrics, d, in.Now)
	recordLastDecision(base, pa, d, in.SpecReplicas, in.Now)
}

// recordLastDecision sets status.lastDecision from the decision's explanation when the round
// changes the replicas, or would have (a dry run's rescale; what the forecast would have done in
// ForecastOnly). A decision explained as the last one was is not written again for its time.
func recordLastDecision(base, pa *podpilotv1alpha1.PodAutoscaler, d decision.Decision, current int32, now time.Time) {
	e := d.Explanation
	to := d.DesiredReplicas
	switch {
	case d.Rescale:
	case e.WouldScaleTo > 0:
		to = e.WouldScaleTo
	default:
		return
	}
	winner := e.Winner
	switch {
	case !d.Rescale:
		winner = "forecast, not applied (ForecastOnly)"
		for _, p := range e.Proposals {
			if p.Source == decision.ForecastProposal {
				winner = "forecast of " + p.Name + ", not applied (ForecastOnly)"
			}
		}
	case winner == "":
		winner = d.Reason
	}
	ld := &podpilotv1alpha1.LastDecision{Time: metav1.NewTime(now), FromReplicas: current, ToReplicas: to, Winner: truncateMessage(winner, maxProposalName)}
	for _, p := range e.Proposals[:min(len(e.Proposals), maxProposals)] {
		ld.Proposals = append(ld.Proposals, podpilotv1alpha1.DecisionProposal{Source: string(p.Source), Name: truncateMessage(p.Name, maxProposalName), Replicas: p.Replicas})
	}
	for _, ch := range e.Changes[:min(len(e.Changes), maxChanges)] {
		ld.Changes = append(ld.Changes, truncateMessage(ch, maxChangeMessage))
	}
	if old := base.Status.LastDecision; old != nil {
		same := old.DeepCopy()
		same.Time = ld.Time
		if equality.Semantic.DeepEqual(same, ld) {
			ld = old.DeepCopy()
		}
	}
	pa.Status.LastDecision = ld
}
