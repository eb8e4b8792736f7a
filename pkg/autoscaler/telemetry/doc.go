// Package telemetry is the autoscaler's Prometheus series about itself: reconciliations, metric
// computations, rounds, the fetcher's calls, panics, the forecast models held, and one series per
// PodAutoscaler read from the informer; pkg/autoscaler/metrics is the metric sources the
// autoscaler reads. It must not import pkg/autoscaler/controller.
package telemetry
