package framework

import (
	"cmp"
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// Condition reports whether what a test waits for holds, and a short
// description of the state it saw, which WaitFor prints if it times out.
type Condition func(ctx context.Context) (done bool, state string, err error)

// WaitFor polls cond every 250ms until it holds, and fails the test with what
// it waited for and the last state seen if it does not within timeout.
// An error from cond is treated as a state, not a failure: clusters are
// eventually consistent.
func WaitFor(ctx context.Context, t testing.TB, timeout time.Duration, what string, cond Condition) {
	t.Helper()
	start := time.Now()
	if err := Poll(ctx, timeout, what, cond); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s after %s", what, time.Since(start).Round(time.Millisecond))
}

// Poll is WaitFor for callers without a test: it returns the failure.
func Poll(ctx context.Context, timeout time.Duration, what string, cond Condition) error {
	return PollEvery(ctx, 250*time.Millisecond, timeout, what, cond)
}

// PollEvery is Poll at a chosen interval, for conditions that list many objects.
func PollEvery(ctx context.Context, interval, timeout time.Duration, what string, cond Condition) error {
	// The last state and the last error are kept apart: a poll that the timeout cuts short (a
	// request in flight, or a rate limiter that would wait past the deadline) must not hide the
	// state reported before it.
	var last, lastErr string
	start := time.Now()
	err := wait.PollUntilContextTimeout(ctx, interval, timeout, true, func(ctx context.Context) (bool, error) {
		done, state, err := cond(ctx)
		if err != nil {
			lastErr = err.Error()
			return false, nil
		}
		last, lastErr = state, ""
		return done, nil
	})
	if err != nil {
		if lastErr != "" {
			last = fmt.Sprintf("%s (then error: %s)", cmp.Or(last, "none"), lastErr)
		}
		// A caller that was stopped (a signal, its own deadline) did not wait the whole timeout:
		// say so, and for how long it waited, rather than report the timeout it was given.
		if ctx.Err() != nil {
			return fmt.Errorf("stopped (%w) after %s of %s waiting for %s; last state: %s",
				context.Cause(ctx), time.Since(start).Round(time.Second), timeout, what, last)
		}
		return fmt.Errorf("timed out after %s waiting for %s; last state: %s", timeout, what, last)
	}
	return nil
}
