package status

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/decision"
	"github.com/podpilot/podpilot/pkg/autoscaler/normalize"
)

// Bounds of status.lastDecision and status.prediction, the schema's.
const (
	maxProposals     = 44
	maxChanges       = 4
	maxProposalName  = 512
	maxChangeMessage = 256
)

// RecordLastDecision sets status.lastDecision from the round's decision: every round that
// decides explains itself, a rescale (or a dry run's), what the forecast would have done in
// ForecastOnly, and a round that holds the replicas (heldWinner says why). A decision explained
// as the last one was keeps the last one's time and is not written again (see VisiblyChanged):
// a steady hold costs no status write.
func RecordLastDecision(base, pa *podpilotv1alpha1.PodAutoscaler, d decision.Decision, current int32, now time.Time) {
	e := d.Explanation
	winner, to := e.Winner, d.DesiredReplicas
	switch {
	case d.Rescale && winner == "":
		winner = d.Reason
	case d.Rescale:
	case e.WouldScaleTo > 0:
		winner, to = forecastOnlyWinner(e), e.WouldScaleTo
	default:
		winner, to = heldWinner(d, current), current
	}
	ld := &podpilotv1alpha1.LastDecision{Time: metav1.NewTime(now), FromReplicas: current, ToReplicas: to, Winner: TruncateMessage(winner, maxProposalName)}
	for _, p := range e.Proposals[:min(len(e.Proposals), maxProposals)] {
		ld.Proposals = append(ld.Proposals, podpilotv1alpha1.DecisionProposal{Source: string(p.Source), Name: TruncateMessage(p.Name, maxProposalName), Replicas: p.Replicas})
	}
	for _, ch := range e.Changes[:min(len(e.Changes), maxChanges)] {
		ld.Changes = append(ld.Changes, TruncateMessage(ch, maxChangeMessage))
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

// forecastOnlyWinner names what the forecast would have done in ForecastOnly.
func forecastOnlyWinner(e decision.Explanation) string {
	winner := "forecast, not applied (ForecastOnly)"
	for _, p := range e.Proposals {
		if p.Source == decision.ForecastProposal {
			winner = "forecast of " + p.Name + ", not applied (ForecastOnly)"
		}
	}
	return winner
}

// heldWinner says why a round kept the current replicas: the proposals ask for them (within
// tolerance), what normalization kept them at (a stabilization window, minReplicas or
// maxReplicas, scaling policies, a schedule window's floor), or that the metrics could not be
// used (the ScalingActive condition's reason, whose message says more). The words depend only
// on the kind of hold and the replicas, so that a steady hold is one explanation.
func heldWinner(d decision.Decision, current int32) string {
	e := d.Explanation
	if len(d.Conditions) > 0 && d.Conditions[0].Type == decision.ScalingActive && !d.Conditions[0].Status {
		return fmt.Sprintf("held: %s (see condition ScalingActive)", d.Conditions[0].Reason)
	}
	switch {
	case e.Winner == "" && len(e.Proposals) == 0:
		return "held"
	case e.Proposed == current:
		return "held: within tolerance"
	case e.WinnerSource == decision.ScheduleProposal:
		return fmt.Sprintf("held: %s keeps %d", e.Winner, current)
	case len(e.Changes) == 0:
		return fmt.Sprintf("held at %d", current)
	}
	last, _, _ := strings.Cut(e.Changes[len(e.Changes)-1], ":")
	what := map[string]string{
		normalize.ReasonScaleUpStabilized: "stabilization window keeps", normalize.ReasonScaleDownStabilized: "stabilization window keeps",
		normalize.ReasonTooFewReplicas: "minReplicas keeps", normalize.ReasonTooManyReplicas: "maxReplicas keeps",
		normalize.ReasonScaleUpLimit: "scaling policies keep", normalize.ReasonScaleDownLimit: "scaling policies keep",
	}[last]
	if what == "" {
		what = last + " keeps"
	}
	return fmt.Sprintf("held: %s %d", what, current)
}
