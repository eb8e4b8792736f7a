// Package schedule applies a PodAutoscaler's schedule windows in a round: the floor the
// calendar sets now, what status.schedules and ScheduleActive show of it, the window events, and
// when the next window starts or ends. It builds on the pure calendar package and must not import
// pkg/autoscaler/controller.
package schedule
