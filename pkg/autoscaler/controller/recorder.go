package controller

import (
	"k8s.io/client-go/tools/events"

	"github.com/podpilot/podpilot/pkg/autoscaler/status"
)

// NewRecorder returns a recorder of events on PodAutoscalers sent through b, whose scheme
// knows the podpilot types (see status.NewRecorder). The caller starts and shuts down b.
func NewRecorder(b events.EventBroadcaster) (events.EventRecorder, error) {
	return status.NewRecorder(b, Name)
}
