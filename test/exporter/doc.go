// Package exporter is a small Prometheus exporter for tests and the demo:
// it serves per-pod gauges and counters whose values the caller sets, for a
// real Prometheus to scrape.
package exporter
