//go:build faults

package e2e

// strictTiming is on under the faults tag (`make test-faults`): timed promises
// ("within timeout + 1 s", "within one sync period") fail the test.
const strictTiming = true
