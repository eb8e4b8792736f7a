//go:build !faults

package e2e

// strictTiming is off in `make test`: timed promises are reported, not asserted.
const strictTiming = false
