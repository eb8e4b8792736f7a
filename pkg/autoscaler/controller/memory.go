package controller

import (
	"github.com/podpilot/podpilot/pkg/autoscaler/prediction"
	"github.com/podpilot/podpilot/pkg/autoscaler/state"
)

// concerns is what the round's concerns beside the decision keep of each PodAutoscaler in the
// term's memory (see state.Memory): the schedule windows (floor.go) and the forecasts' accuracy
// (predictionstatus.go). They live and go with the object's entry.
type concerns struct {
	// schedule is the compiled calendar and the windows last seen active (floor.go).
	schedule scheduleMemory
	// accuracy measures each metric's forecasts, by metric name (predictionstatus.go).
	accuracy prediction.Accuracies
}

// remembered is one PodAutoscaler as the leader knows it.
type remembered = state.Remembered[concerns]
