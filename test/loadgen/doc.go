// Package loadgen offers queries to test/workload at the rate of a load
// profile (ramp, hold, fall), bounded in count and time, and reports each
// second what was sent, answered and failed. It sends only to loopback or
// private (cluster-internal) IP addresses.
package loadgen
