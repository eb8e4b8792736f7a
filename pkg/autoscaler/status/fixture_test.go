package status

import (
	"github.com/podpilot/podpilot/pkg/autoscaler/autoscalertest"
)

var now = autoscalertest.Now

// seedAutoscaler is the seed 000 example; mutate adapts it per case.
var seedAutoscaler = autoscalertest.Seed
