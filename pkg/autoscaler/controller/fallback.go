package controller

import (
	"time"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/decision"
	"github.com/podpilot/podpilot/pkg/autoscaler/state"
	"github.com/podpilot/podpilot/pkg/autoscaler/status"
)

// fallbacks returns where the round's External metric fallbacks stand (see decision.Fallbacks),
// remembers it in the term's memory before anything is written, and reports it: the
// ExternalMetricFallbackActive condition, and an event where a fallback began or ended since the
// last round as the memory knew it (seeded from the status: a new leader does not repeat an
// event). The failure starts reach the status as its checkpoint (state.PersistFallbacks) after
// the fact; a start the status never got makes a new leader count from its own first failed
// round, later, never sooner.
func (c *Controller) fallbacks(tm *term, pa *podpilotv1alpha1.PodAutoscaler, mem remembered, metrics []decision.Metric,
	now time.Time) []decision.FallbackState {
	states := decision.Fallbacks(metrics, now)
	marks := state.MarksOf(states)
	tm.memory.Remember(state.ObjectRef(pa), func(e *remembered) { e.Fallbacks = marks })
	status.ReportFallbacks(c.recorder, pa, states, func(id decision.MetricID) bool { return mem.Fallbacks[id].Active }, now)
	return states
}
