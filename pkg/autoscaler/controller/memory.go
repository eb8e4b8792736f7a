package controller

import (
	"time"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/decision"
	"github.com/podpilot/podpilot/pkg/autoscaler/prediction"
	"github.com/podpilot/podpilot/pkg/autoscaler/schedule"
	"github.com/podpilot/podpilot/pkg/autoscaler/state"
)

// concerns is what the round's concerns beside the decision keep of each PodAutoscaler in the
// term's memory (see state.Memory): the schedule windows (pkg/autoscaler/schedule) and the
// forecasts' accuracy (pkg/autoscaler/prediction). They live and go with the object's entry.
type concerns struct {
	// schedule is the compiled calendar and the windows last seen active (see schedule.Memory).
	schedule schedule.Memory
	// accuracy measures each metric's forecasts, by metric (see prediction.Accuracies).
	accuracy prediction.Accuracies
}

// remembered is one PodAutoscaler as the leader knows it.
type remembered = state.Remembered[concerns]

// scheduleFloor returns the floor pa's schedule windows set at now and records them in pa's
// status (see schedule.Floor), with what the term's memory keeps of pa's windows.
func (c *Controller) scheduleFloor(tm *term, base, pa *podpilotv1alpha1.PodAutoscaler, now time.Time) decision.Floor {
	remember := func(change func(*schedule.Memory)) {
		tm.memory.Remember(state.ObjectRef(pa), func(e *remembered) { change(&e.Concerns.schedule) })
	}
	return schedule.Floor(c.recorder, remember, base, pa, now)
}
