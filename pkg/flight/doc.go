// Package flight shares calls: one call per key in flight, whatever the number of callers, and
// its answer reused only as a stated Policy allows (how long, and whether a failure may be).
// It is the one caching rule of podpilot's metric reads; it imports nothing of podpilot.
package flight
