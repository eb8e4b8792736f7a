//go:build !faults

package node

// strictTiming is off in `make test-node`: timed promises are reported, not
// asserted (`make test-node NODE_FLAGS=-tags=faults` asserts them).
const strictTiming = false
