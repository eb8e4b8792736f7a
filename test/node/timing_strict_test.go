//go:build faults

package node

// strictTiming is on under the faults tag: timed promises are asserted.
const strictTiming = true
