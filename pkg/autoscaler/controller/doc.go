// Package controller runs podpilot's autoscaler: it watches PodAutoscalers, reads their pods and
// metrics, asks the pure decision package for the replicas, and writes the scale subresource of
// the target, the PodAutoscaler's status (with its stabilization history) and events.
package controller
