package metricsapi

import (
	"fmt"
	"time"

	"k8s.io/component-base/metrics"
)

// Values of the api label of the discovered-metrics gauge and of the result label of reloads.
const (
	apiCustom      = "custom"
	apiExternal    = "external"
	resultSuccess  = "success"
	resultFailure  = "failure"
	reloadTrigger  = "file_change"
	reloadOnSignal = "sighup"
)

// providerMetrics are the provider's own metrics.
type providerMetrics struct {
	discoveryDuration *metrics.Histogram
	discovered        *metrics.GaugeVec
	seriesFailures    *metrics.CounterVec
	reloads           *metrics.CounterVec
	queryRequests     *metrics.CounterVec
}

// newProviderMetrics creates the provider metrics and registers them on r:
// podpilot_metrics_discovery_duration_seconds, podpilot_metrics_discovery_metrics{api},
// podpilot_metrics_discovery_series_query_failures_total{rule,backend},
// podpilot_metrics_discovery_rule_reloads_total{trigger,result} and
// podpilot_metrics_query_requests_total{api,backend,served_by}.
func newProviderMetrics(r metrics.KubeRegistry) (*providerMetrics, error) {
	m := &providerMetrics{
		discoveryDuration: metrics.NewHistogram(&metrics.HistogramOpts{
			Namespace:      "podpilot",
			Subsystem:      "metrics_discovery",
			Name:           "duration_seconds",
			Help:           "Duration of a metrics discovery pass over every series query of the rules.",
			Buckets:        []float64{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60},
			StabilityLevel: metrics.ALPHA,
		}),
		discovered: metrics.NewGaugeVec(&metrics.GaugeOpts{
			Namespace:      "podpilot",
			Subsystem:      "metrics_discovery",
			Name:           "metrics",
			Help:           "Metrics served after the last discovery pass, by API (custom, external).",
			StabilityLevel: metrics.ALPHA,
		}, []string{"api"}),
		seriesFailures: metrics.NewCounterVec(&metrics.CounterOpts{
			Namespace:      "podpilot",
			Subsystem:      "metrics_discovery",
			Name:           "series_query_failures_total",
			Help:           "Failed series queries by rule (rules[i] or externalRules[i]) and backend; the rule keeps its last good series.",
			StabilityLevel: metrics.ALPHA,
		}, []string{"rule", "backend"}),
		reloads: metrics.NewCounterVec(&metrics.CounterOpts{
			Namespace:      "podpilot",
			Subsystem:      "metrics_discovery",
			Name:           "rule_reloads_total",
			Help:           "Rule file reloads by trigger (file_change, sighup) and result (success, failure).",
			StabilityLevel: metrics.ALPHA,
		}, []string{"trigger", "result"}),
		queryRequests: metrics.NewCounterVec(&metrics.CounterOpts{
			Namespace: "podpilot",
			Subsystem: "metrics",
			Name:      "query_requests_total",
			Help: "Prometheus queries asked for by custom and external metrics requests, by API (custom, external), backend and by " +
				"what answered them: prometheus (the request sent the query), in_flight (it shared the same query in flight) " +
				"or cache (it reused an answer younger than --metrics-query-cache-max-age).",
			StabilityLevel: metrics.ALPHA,
		}, []string{"api", "backend", "served_by"}),
	}
	for _, c := range []metrics.Registerable{m.discoveryDuration, m.discovered, m.seriesFailures, m.reloads, m.queryRequests} {
		if err := r.Register(c); err != nil {
			return nil, fmt.Errorf("register metrics provider metrics: %w", err)
		}
	}
	return m, nil
}

// observeDiscovery records one discovery pass.
func (m *providerMetrics) observeDiscovery(d time.Duration, custom, external int) {
	m.discoveryDuration.Observe(d.Seconds())
	m.discovered.WithLabelValues(apiCustom).Set(float64(custom))
	m.discovered.WithLabelValues(apiExternal).Set(float64(external))
}

// queryCounter counts the queries of api by what served them.
func (m *providerMetrics) queryCounter(api string) func(backend, servedBy string) {
	return func(backend, servedBy string) { m.queryRequests.WithLabelValues(api, backend, servedBy).Inc() }
}
