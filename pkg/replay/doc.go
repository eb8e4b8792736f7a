// Package replay runs PodAutoscaler specs over a workload's Prometheus history: it reads the
// metrics through the server's rules with query_range and drives the pure algorithm packages with
// a simulated clock, without a cluster. It imports no client-go; it is what `podpilot replay` runs.
package replay
