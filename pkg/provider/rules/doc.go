// Package rules turns a prometheus-adapter compatible rule file into compiled rules that name
// discovered Prometheus series as Kubernetes metrics and render safe PromQL for API requests.
// It is pure: no HTTP, no client-go, no clock; requests never change the shape of a query.
// See matchers.go for escaping and for the chunking policy for long object-name lists.
package rules
