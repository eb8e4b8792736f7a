package forward

import (
	"fmt"

	"k8s.io/component-base/metrics"
)

// Values of the op label of podpilot_external_metrics_forward_errors_total.
const (
	opGet  = "get"
	opList = "list"
)

// newErrorsCounter registers podpilot_external_metrics_forward_errors_total{op} on r.
func newErrorsCounter(r metrics.KubeRegistry) (*metrics.CounterVec, error) {
	c := metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace: "podpilot",
		Subsystem: "external_metrics_forward",
		Name:      "errors_total",
		Help: "Failures to reach or read the other external metrics adapter, by op: get (a forwarded request, answered 503) " +
			"or list (a fetch of its metric list for discovery, which keeps the last list). Its own error answers are not counted.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"op"})
	if r == nil {
		return c, nil
	}
	if err := r.Register(c); err != nil {
		return nil, fmt.Errorf("register external metrics forward metrics: %w", err)
	}
	return c, nil
}
