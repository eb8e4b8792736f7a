package metrics

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// TestWithFreshnessAsksAnewOnlyPastItsOwnAge checks the per-read freshness of a PodAutoscaler
// with a shorter sync period of its own: it takes no answer older than its freshness, and the
// answer it asks for serves the readers after it, so the calls stay one per query and age.
func TestWithFreshnessAsksAnewOnlyPastItsOwnAge(t *testing.T) {
	var calls atomic.Int32
	f, clk := newTestFetcher(t, FetcherConfig{External: queue(&calls), Freshness: 7500 * time.Millisecond})
	plain := t.Context()
	fast := WithFreshness(plain, 2500*time.Millisecond) // a 5 s syncPeriodSeconds
	steps := []struct {
		name      string
		after     time.Duration
		ctx       context.Context
		wantCalls int32
	}{
		{"the first read calls", 0, plain, 1},
		{"a reader with the fetcher's freshness reuses a 3 s old answer", 3 * time.Second, plain, 1},
		{"a reader with 2.5 s freshness asks anew for a 3 s old answer", 0, fast, 2},
		{"a second reader with 2.5 s freshness reuses that new answer", time.Second, fast, 2},
		{"a reader with the fetcher's freshness reuses it too", 0, plain, 2},
		{"past 2.5 s the fast reader asks anew once more", 2 * time.Second, fast, 3},
	}
	for _, s := range steps {
		clk.Step(s.after)
		if _, err := f.ExternalMetric(s.ctx, "dns", "queue_length", nil); err != nil {
			t.Fatal(err)
		}
		if got := calls.Load(); got != s.wantCalls {
			t.Errorf("%s: %d calls, want %d", s.name, got, s.wantCalls)
		}
	}
}

// TestARoundThatWaitedInTheQueueTakesTheAnswerAskedSinceItFellDue checks the rule that keeps the
// calls one per namespace, metric and round however long the queue: a round takes an answer
// asked less than the freshness before it fell due, not before it ran, as long as the answer is
// retained; a read without a due time is due when it is made.
func TestARoundThatWaitedInTheQueueTakesTheAnswerAskedSinceItFellDue(t *testing.T) {
	const freshness = 7500 * time.Millisecond
	steps := []struct {
		name      string
		after     time.Duration // clock step before the read
		dueAgo    time.Duration // the round fell due this long before the read; -1: no due time
		wantCalls int32
	}{
		{"the first read calls", 0, -1, 1},
		{"30 s later a round due 25 s ago takes the answer asked 5 s before it fell due", 30 * time.Second, 25 * time.Second, 1},
		{"a read without a due time asks anew for a 30 s old answer", 0, -1, 2},
		{"a round due 20 s ago takes that new answer", 10 * time.Second, 20 * time.Second, 2},
		{"a round that fell due 8 s after the answer was asked asks anew", 8 * time.Second, 0, 3},
		{"a round due just now reuses an answer 7 s old", 7 * time.Second, 0, 3},
		{"a round takes no answer past the retention (5 min) however long ago it fell due", 301 * time.Second, 10 * time.Minute, 4},
	}
	var calls atomic.Int32
	f, clk := newTestFetcher(t, FetcherConfig{External: queue(&calls), Freshness: freshness})
	for _, s := range steps {
		clk.Step(s.after)
		ctx := t.Context()
		if s.dueAgo >= 0 {
			ctx = WithRoundDue(ctx, clk.Now().Add(-s.dueAgo))
		}
		if _, err := f.ExternalMetric(ctx, "dns", "queue_length", nil); err != nil {
			t.Fatal(err)
		}
		if got := calls.Load(); got != s.wantCalls {
			t.Errorf("%s: %d calls, want %d", s.name, got, s.wantCalls)
		}
	}
}

// TestAShorterFreshnessOfItsOwnCountsFromTheRoundsDueTime checks that WithFreshness and
// WithRoundDue combine: the reader's own freshness before its due time.
func TestAShorterFreshnessOfItsOwnCountsFromTheRoundsDueTime(t *testing.T) {
	var calls atomic.Int32
	f, clk := newTestFetcher(t, FetcherConfig{External: queue(&calls), Freshness: 7500 * time.Millisecond})
	if _, err := f.ExternalMetric(t.Context(), "dns", "queue_length", nil); err != nil {
		t.Fatal(err)
	}
	clk.Step(20 * time.Second)
	fast := WithFreshness(t.Context(), 2500*time.Millisecond)
	if _, err := f.ExternalMetric(WithRoundDue(fast, clk.Now().Add(-18*time.Second)), "dns", "queue_length", nil); err != nil {
		t.Fatal(err)
	}
	if got := calls.Load(); got != 1 {
		t.Errorf("a round due 2 s after the answer with 2.5 s of its own: %d calls, want 1", got)
	}
	if _, err := f.ExternalMetric(WithRoundDue(fast, clk.Now().Add(-17*time.Second)), "dns", "queue_length", nil); err != nil {
		t.Fatal(err)
	}
	if got := calls.Load(); got != 2 {
		t.Errorf("a round due 3 s after the answer with 2.5 s of its own: %d calls, want 2", got)
	}
}
