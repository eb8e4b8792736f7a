package prediction

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestModelsAreSharedPerDistinctHistoryAndARefitReadsOnlyTheTail(t *testing.T) {
	h := &fakeHistory{Load: eveningRush}
	f := newModelsFixture(t, h)
	p := seedQPSPlan()
	waitForFit(t, f.models, p, now)
	for range 10 { // ten PodAutoscalers' rounds on the same metric and selector
		if _, err := f.models.get(t.Context(), p); err != nil {
			t.Fatal(err)
		}
	}
	f.clock.Step(2 * HistoryRetry)
	if _, err := f.models.get(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	if n := len(h.Requests()); n != 1 {
		t.Errorf("%d history reads within the refresh, want 1: the fit is reused", n)
	}
	f.clock.Step(DefaultRefresh - 2*HistoryRetry)
	if _, err := f.models.get(t.Context(), p); err != nil { // starts the refit
		t.Fatal(err)
	}
	got := waitForFit(t, f.models, p, now.Add(DefaultRefresh))
	if got.model == nil {
		t.Fatalf("refit: %+v", got)
	}
	reqs := h.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d history reads, want 2: one per refresh", len(reqs))
	}
	if values := reqs[1].End.Sub(reqs[1].Start)/time.Minute + 1; values != 7 {
		t.Errorf("the refit read %d values, want 7: the 5 minutes since and the 2 read again", values)
	}
}

// waitForFit starts p's fit, or joins the one running, and waits for it: it must be one made at
// or after at.
func waitForFit(t *testing.T, m *Models, p Plan, at time.Time) Fit {
	t.Helper()
	a, err := m.Start(t.Context(), p).Wait(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if a.Value.at.Before(at) {
		t.Fatalf("no fit made at or after %s; the one answered is from %s", at, a.Value.at)
	}
	return a.Value
}

// TestADueRefitNeverHoldsUpARound: once a model is held, its refit runs in the background while
// the held model answers the rounds, for up to MaxStaleFits refreshes past its refresh; past
// that the forecast is off until the refit lands, and the round still does not wait.
func TestADueRefitNeverHoldsUpARound(t *testing.T) {
	h := &fakeHistory{Load: eveningRush}
	f := newModelsFixture(t, h)
	p := seedQPSPlan()
	first := waitForFit(t, f.models, p, now)
	if first.model == nil {
		t.Fatalf("first fit: %+v", first)
	}
	gate := make(chan struct{})
	h.SetGate(gate)
	f.clock.Step(DefaultRefresh)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	got, err := f.models.get(ctx, p) // the refit is due and held up at the gate
	if err != nil || got.at != first.at {
		t.Fatalf("a round with a refit due got %+v, %v; want the held model of %s at once", got, err, first.at)
	}
	close(gate)
	if got := waitForFit(t, f.models, p, first.at.Add(DefaultRefresh)); got.model == nil {
		t.Fatalf("the background refit: %+v", got)
	}
	held := make(chan struct{})
	h.SetGate(held)
	f.clock.Step(time.Duration(2+MaxStaleFits) * DefaultRefresh) // the held model is too old to answer
	if got, err := f.models.get(t.Context(), p); !errors.Is(err, errForecastNotReady) {
		t.Errorf("past %d refreshes with the refit held up: got %+v, %v; want no forecast, not ready, at once", 1+MaxStaleFits, got, err)
	}
	close(held)
}
