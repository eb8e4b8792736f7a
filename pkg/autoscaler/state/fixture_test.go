package state

import (
	"k8s.io/client-go/tools/cache"

	"github.com/podpilot/podpilot/pkg/autoscaler/autoscalertest"
)

const ns = autoscalertest.Namespace

var (
	now   = autoscalertest.Now
	paKey = cache.ObjectName{Namespace: ns, Name: autoscalertest.Name}
)

// seedAutoscaler is the seed 000 example; mutate adapts it per case.
var seedAutoscaler = autoscalertest.Seed
