// Package promtext parses a Prometheus text exposition (a component's
// /metrics) and sums the samples the bench compares before and after a run.
package promtext
