package prometheus

import (
	"fmt"
	"time"

	"k8s.io/component-base/metrics"
)

// Metrics records the client's own calls to Prometheus. A nil *Metrics
// records nothing.
type Metrics struct {
	duration *metrics.HistogramVec
	errors   *metrics.CounterVec
}

// NewMetrics creates the client metrics and registers them on r:
// podpilot_prometheus_client_request_duration_seconds and
// podpilot_prometheus_client_request_errors_total, both labelled by operation
// (query, series) and outcome.
func NewMetrics(r metrics.KubeRegistry) (*Metrics, error) {
	m := &Metrics{
		duration: metrics.NewHistogramVec(&metrics.HistogramOpts{
			Namespace:      "podpilot",
			Subsystem:      "prometheus_client",
			Name:           "request_duration_seconds",
			Help:           "Duration of calls to the Prometheus HTTP API, by operation and outcome.",
			Buckets:        []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30},
			StabilityLevel: metrics.ALPHA,
		}, []string{"operation", "outcome"}),
		errors: metrics.NewCounterVec(&metrics.CounterOpts{
			Namespace:      "podpilot",
			Subsystem:      "prometheus_client",
			Name:           "request_errors_total",
			Help:           "Failed calls to the Prometheus HTTP API, by operation and outcome.",
			StabilityLevel: metrics.ALPHA,
		}, []string{"operation", "outcome"}),
	}
	for _, c := range []metrics.Registerable{m.duration, m.errors} {
		if err := r.Register(c); err != nil {
			return nil, fmt.Errorf("register prometheus client metrics: %w", err)
		}
	}
	return m, nil
}

// observe records one call.
func (m *Metrics) observe(op, outcome string, d time.Duration) {
	if m == nil {
		return
	}
	m.duration.WithLabelValues(op, outcome).Observe(d.Seconds())
	if outcome != outcomeSuccess {
		m.errors.WithLabelValues(op, outcome).Inc()
	}
}
