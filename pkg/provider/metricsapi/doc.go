// Package metricsapi serves custom.metrics.k8s.io and external.metrics.k8s.io from Prometheus:
// it discovers series with the compiled rules, reloads the rule file, resolves objects from a
// metadata-only informer cache and answers each request with one bounded PromQL query.
package metricsapi
