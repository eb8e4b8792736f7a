// Package scenario runs make bench's scenarios on the real local control
// plane (test/e2e/framework): the metrics API's per-request cost, stock HPAs
// and PodAutoscalers at N, reaction time and memory, each against a baseline
// measured in the same run.
package scenario
