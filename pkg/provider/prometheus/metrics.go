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
	warnings *metrics.CounterVec
}

// NewMetrics creates the client metrics and registers them on r:
// podpilot_prometheus_client_request_duration_seconds and
// podpilot_prometheus_client_request_errors_total, both labelled by backend, operation
// (query, series) and outcome, and
// podpilot_prometheus_client_answers_with_warnings_total, labelled by backend and operation.
// The backend label has one value per backend configured (default and the rule file's).
func NewMetrics(r metrics.KubeRegistry) (*Metrics, error) {
	m := &Metrics{
		duration: metrics.NewHistogramVec(&metrics.HistogramOpts{
			Namespace:      "podpilot",
			Subsystem:      "prometheus_client",
			Name:           "request_duration_seconds",
			Help:           "Duration of calls to the Prometheus HTTP API, by backend, operation and outcome.",
			Buckets:        []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30},
			StabilityLevel: metrics.ALPHA,
		}, []string{"backend", "operation", "outcome"}),
		errors: metrics.NewCounterVec(&metrics.CounterOpts{
			Namespace:      "podpilot",
			Subsystem:      "prometheus_client",
			Name:           "request_errors_total",
			Help:           "Failed calls to the Prometheus HTTP API, by backend, operation and outcome.",
			StabilityLevel: metrics.ALPHA,
		}, []string{"backend", "operation", "outcome"}),
		warnings: metrics.NewCounterVec(&metrics.CounterOpts{
			Namespace: "podpilot",
			Subsystem: "prometheus_client",
			Name:      "answers_with_warnings_total",
			Help: "Answers of the Prometheus HTTP API that carried warnings (possibly partial: a Thanos store or a remote-read " +
				"endpoint failed, a limit was hit), by backend and operation. With --prometheus-warnings-as-errors (the default) each is " +
				"also a failed call with outcome partial.",
			StabilityLevel: metrics.ALPHA,
		}, []string{"backend", "operation"}),
	}
	for _, c := range []metrics.Registerable{m.duration, m.errors, m.warnings} {
		if err := r.Register(c); err != nil {
			return nil, fmt.Errorf("register prometheus client metrics: %w", err)
		}
	}
	return m, nil
}

// observe records one call.
func (m *Metrics) observe(backend, op, outcome string, d time.Duration) {
	if m == nil {
		return
	}
	m.duration.WithLabelValues(backend, op, outcome).Observe(d.Seconds())
	if outcome != outcomeSuccess {
		m.errors.WithLabelValues(backend, op, outcome).Inc()
	}
}

// warned records one answer with warnings.
func (m *Metrics) warned(backend, op string) {
	if m == nil {
		return
	}
	m.warnings.WithLabelValues(backend, op).Inc()
}
