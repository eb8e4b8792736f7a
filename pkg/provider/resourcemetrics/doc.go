// Package resourcemetrics serves the resource metrics API (metrics.k8s.io/v1beta1, what
// `kubectl top` and the HPA's cpu and memory targets read) from Prometheus with the rule file's
// resourceRules: one PromQL query per resource per request, installed into an existing
// generic API server.
package resourcemetrics
