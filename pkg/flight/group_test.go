package flight

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"
)

var (
	t0      = time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
	errDown = errors.New("prometheus down")
)

// step is one Get at a time after t0, with the answer the source gives if it is called.
type step struct {
	at  time.Duration
	err error
}

// outcome is what a caller got: which call answered it, and whether it failed.
type outcome struct {
	Call   int
	Failed bool
}

func TestPolicyDecidesWhatIsReused(t *testing.T) {
	tests := []struct {
		name   string
		policy Policy
		steps  []step
		want   []outcome
	}{{
		name:   "the zero policy reuses no finished answer",
		policy: Policy{},
		steps:  []step{{at: 0}, {at: 0}, {at: time.Second}},
		want:   []outcome{{Call: 1}, {Call: 2}, {Call: 3}},
	}, {
		name:   "an answer is reused until it is MaxAge old, counted from when its call started",
		policy: Policy{MaxAge: 5 * time.Second},
		steps:  []step{{at: 0}, {at: 4999 * time.Millisecond}, {at: 5 * time.Second}},
		want:   []outcome{{Call: 1}, {Call: 1}, {Call: 2}},
	}, {
		name:   "a failure is never reused without KeepErrors: the next caller calls again",
		policy: Policy{MaxAge: 5 * time.Second},
		steps:  []step{{at: 0, err: errDown}, {at: time.Second}, {at: 2 * time.Second}},
		want:   []outcome{{Call: 1, Failed: true}, {Call: 2}, {Call: 2}},
	}, {
		name:   "with KeepErrors a failure is reused for MaxAge like an answer",
		policy: Policy{MaxAge: 5 * time.Second, KeepErrors: true},
		steps:  []step{{at: 0, err: errDown}, {at: time.Second}, {at: 5 * time.Second}},
		want:   []outcome{{Call: 1, Failed: true}, {Call: 1, Failed: true}, {Call: 2}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(t0)
			g, err := New[string, int](clk, tt.policy)
			if err != nil {
				t.Fatal(err)
			}
			calls := 0
			var got []outcome
			for _, s := range tt.steps {
				clk.SetTime(t0.Add(s.at))
				a, err := g.Get(t.Context(), "ns/qps", func(context.Context) (int, error) {
					calls++
					return calls, s.err
				})
				call := a.Value
				if err != nil {
					call = calls
				}
				got = append(got, outcome{Call: call, Failed: err != nil})
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("outcomes (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCallersOfOneKeyShareTheCallInFlight(t *testing.T) {
	g, err := New[string, int](nil, Policy{})
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	release := make(chan struct{})
	fetch := func(context.Context) (int, error) {
		calls.Add(1)
		<-release
		return 7, nil
	}
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			if a, err := g.Get(t.Context(), "k", fetch); err != nil || a.Value != 7 {
				t.Errorf("Get = %v, %v; want 7", a.Value, err)
			}
		})
	}
	for calls.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(10 * time.Millisecond) // let the other callers join
	close(release)
	wg.Wait()
	if got := calls.Load(); got != 1 {
		t.Errorf("calls = %d, want 1 for 10 concurrent callers", got)
	}
}

func TestStartBeginsACallWithoutWaitingAndGetSharesIt(t *testing.T) {
	g, err := New[string, int](nil, Policy{MaxAge: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	release := make(chan struct{})
	fetch := func(context.Context) (int, error) {
		calls.Add(1)
		<-release
		return 3, nil
	}
	g.Start(t.Context(), "k", fetch) // returns at once: the call is blocked on release
	g.Start(t.Context(), "k", fetch) // the call in flight: no second one
	close(release)
	a, err := g.Get(t.Context(), "k", fetch)
	if err != nil || a.Value != 3 {
		t.Fatalf("Get = %v, %v; want the started call's 3", a.Value, err)
	}
	g.Start(t.Context(), "k", fetch) // a reusable answer: no new call
	if got := calls.Load(); got != 1 {
		t.Errorf("calls = %d, want 1: Start joins a call in flight and reuses an answer as Get does", got)
	}
}

func TestAskSaysHowTheCallerIsServedAndWithoutReuseNeverReuses(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Unix(0, 0))
	g, err := New[string, int](clk, Policy{MaxAge: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	var calls atomic.Int32
	fetch := func(context.Context) (int, error) { calls.Add(1); <-release; return 5, nil }
	g.Start(t.Context(), "k", fetch)
	joined, cancel := context.WithCancel(t.Context())
	cancel()
	if a, _ := g.Get(joined, "k", fetch); a.Served != Joined {
		t.Errorf("a caller of a key in flight: served %d, want Joined even when its wait ended first", a.Served)
	}
	close(release)
	if a, err := g.Ask(t.Context(), "k", false, fetch).Wait(t.Context()); err != nil || a.Served != Joined || a.Value != 5 {
		t.Errorf("Ask without reuse of a key in flight = %+v, %v; want the call's 5, Joined", a, err)
	}
	if a, err := g.Get(t.Context(), "k", fetch); err != nil || a.Served != Reused {
		t.Errorf("Get of a finished answer = %+v, %v; want Reused", a, err)
	}
	release = make(chan struct{})
	close(release)
	if a, err := g.Ask(t.Context(), "k", false, fetch).Wait(t.Context()); err != nil || a.Served != Called {
		t.Errorf("Ask without reuse of a finished answer = %+v, %v; want a new call", a, err)
	}
	if got := calls.Load(); got != 2 {
		t.Errorf("calls = %d, want 2", got)
	}
}

func TestACallerWhoseContextEndsStopsWaitingButTheCallGoesOn(t *testing.T) {
	g, err := New[string, int](nil, Policy{MaxAge: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := g.Get(ctx, "k", func(context.Context) (int, error) { <-release; return 1, nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("Get with an ended context = %v, want context.Canceled", err)
	}
	close(release)
	a, err := g.Get(t.Context(), "k", func(context.Context) (int, error) { return 2, nil })
	if err != nil || a.Value != 1 {
		t.Errorf("Get after = %d, %v; want the first call's 1, which went on without its caller", a.Value, err)
	}
}

func TestTimeoutBoundsTheCall(t *testing.T) {
	g, err := New[string, int](nil, Policy{Timeout: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	_, err = g.Get(t.Context(), "k", func(ctx context.Context) (int, error) { <-ctx.Done(); return 0, ctx.Err() })
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Get = %v, want the call's own deadline", err)
	}
}

func TestEntriesAreBounded(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	g, err := New[int, int](clk, Policy{MaxAge: time.Hour, MaxEntries: 3})
	if err != nil {
		t.Fatal(err)
	}
	for k := range 10 {
		clk.Step(time.Second)
		if _, err := g.Get(t.Context(), k, func(context.Context) (int, error) { return k, nil }); err != nil {
			t.Fatal(err)
		}
	}
	g.mu.Lock()
	n := len(g.entries)
	g.mu.Unlock()
	if n > 3 {
		t.Errorf("entries = %d, want at most 3", n)
	}
}

func TestNegativePolicyFieldsAreInvalid(t *testing.T) {
	for name, p := range map[string]Policy{
		"max age":     {MaxAge: -time.Second},
		"timeout":     {Timeout: -time.Second},
		"max entries": {MaxEntries: -1},
	} {
		if _, err := New[string, int](nil, p); !errors.Is(err, ErrInvalidPolicy) {
			t.Errorf("%s: err = %v, want ErrInvalidPolicy", name, err)
		}
	}
}

func TestAPanicInACallIsItsCallersErrorNotTheProcesssEnd(t *testing.T) {
	g, err := New[string, int](nil, Policy{})
	if err != nil {
		t.Fatal(err)
	}
	panics := func(context.Context) (int, error) { panic("injected") }
	if _, err := g.Get(t.Context(), "k", panics); !errors.Is(err, ErrPanicked) {
		t.Errorf("Get of a call that panicked = %v, want %v", err, ErrPanicked)
	}
	if a, err := g.Get(t.Context(), "k", func(context.Context) (int, error) { return 7, nil }); err != nil || a.Value != 7 {
		t.Errorf("Get after the panic = %v, %v; want 7: the key is called again", a.Value, err)
	}
}

func TestDoneSaysWhetherTheAnswerIsInAndWaitThenReturnsItWhateverItsContext(t *testing.T) {
	g, err := New[string, int](nil, Policy{MaxAge: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	p := g.Ask(t.Context(), "k", true, func(context.Context) (int, error) { <-release; return 3, nil })
	if p.Done() {
		t.Fatal("Done while the call is blocked, want false")
	}
	close(release)
	if _, err := g.Get(t.Context(), "k", nil); err != nil { // joins or reuses the call: it has finished after this
		t.Fatal(err)
	}
	if !p.Done() {
		t.Fatal("Done after the call finished, want true")
	}
	ended, cancel := context.WithCancel(t.Context())
	cancel()
	if a, err := p.Wait(ended); err != nil || a.Value != 3 {
		t.Errorf("Wait with an ended context = %v, %v; want the answer in, 3", a.Value, err)
	}
}
