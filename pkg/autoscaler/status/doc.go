// Package status renders what a PodAutoscaler's round shows its reader: conditions, current
// metrics and targets, the last decision, events, each text cut to what the API accepts, and
// whether a status changed visibly enough to be written. It must not import
// pkg/autoscaler/controller.
package status
