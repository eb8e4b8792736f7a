package metrics

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	testingclock "k8s.io/utils/clock/testing"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"
)

var t0 = time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)

func at(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

func TestCadenceNextPlacesRoundsJustAfterALanding(t *testing.T) {
	const (
		period  = 15 * time.Second
		margin  = 500 * time.Millisecond
		minGap  = time.Second
		refresh = 2 * time.Minute
	)
	tests := []struct {
		name    string
		c       Cadence
		now     float64
		want    float64
		aligned bool
	}{
		{name: "scrape equal to the period: the round moves to margin after the landing nearest now+period",
			c: Cadence{Last: at(3), Interval: 15 * time.Second}, now: 10, want: 18.5, aligned: true},
		{name: "the nearest landing may come before now+period, by at most half a step",
			c: Cadence{Last: at(3), Interval: 15 * time.Second}, now: 20, want: 33.5, aligned: true},
		{name: "a scrape shorter than the period: the landing nearest now+period",
			c: Cadence{Last: at(0), Interval: 10 * time.Second}, now: 1, want: 20.5, aligned: true},
		{name: "a scrape longer than the period is cut into steps no longer than the period (60 s → 4 × 15 s)",
			c: Cadence{Last: at(0), Interval: 60 * time.Second}, now: 7, want: 15.5, aligned: true},
		{name: "never sooner than the minimum gap after now",
			c: Cadence{Last: at(0), Interval: 2 * time.Second}, now: 0.1, want: 14.5, aligned: true},
		{name: "an unknown interval keeps the regular period",
			c: Cadence{Last: at(3)}, now: 10, want: 25},
		{name: "a gap under a second (series of several targets) is no cadence",
			c: Cadence{Last: at(3), Interval: 300 * time.Millisecond}, now: 10, want: 25},
		{name: "a cadence that stopped landing keeps the regular period",
			c: Cadence{Last: at(0), Interval: 15 * time.Second}, now: 600, want: 615},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, aligned := tt.c.Next(at(tt.now), period, margin, minGap, refresh)
			if !got.Equal(at(tt.want)) || aligned != tt.aligned {
				t.Errorf("Next = %s (aligned %v), want %s (aligned %v)", got.Sub(t0), aligned, at(tt.want).Sub(t0), tt.aligned)
			}
		})
	}
}

func TestCadenceObserveLearnsTheIntervalFromLandings(t *testing.T) {
	tests := []struct {
		name     string
		landings []float64
		want     Cadence
	}{
		{name: "one landing is no interval yet", landings: []float64{3}, want: Cadence{Last: at(3)}},
		{name: "two landings give the interval", landings: []float64{3, 18}, want: Cadence{Last: at(18), Interval: 15 * time.Second}},
		{name: "the same landing twice changes nothing", landings: []float64{3, 18, 18}, want: Cadence{Last: at(18), Interval: 15 * time.Second}},
		{name: "a skipped landing stays on the grid", landings: []float64{3, 18, 48}, want: Cadence{Last: at(48), Interval: 15 * time.Second}},
		{name: "a multiple first, then its divisor, refines the interval",
			landings: []float64{0, 20, 30}, want: Cadence{Last: at(30), Interval: 10 * time.Second}},
		{name: "a landing off the grid (new scrape offsets) starts learning again",
			landings: []float64{3, 18, 40}, want: Cadence{Last: at(40)}},
		{name: "an older landing is ignored", landings: []float64{3, 18, 10}, want: Cadence{Last: at(18), Interval: 15 * time.Second}},
		{name: "a gap under a second is not an interval", landings: []float64{3, 3.2}, want: Cadence{Last: at(3.2)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c Cadence
			for _, s := range tt.landings {
				c = c.observe(at(s))
			}
			if !c.Last.Equal(tt.want.Last) || c.Interval != tt.want.Interval {
				t.Errorf("cadence = %+v, want %+v", c, tt.want)
			}
		})
	}
}

// landings is a SampleTimeSource answering from a schedule and counting its calls.
type landings struct {
	clock *testingclock.FakeClock
	every time.Duration
	phase time.Duration
	err   error
	calls int
	asked []string
}

func (l *landings) LastSample(_ context.Context, ns string, info provider.CustomMetricInfo, _ labels.Selector) (time.Time, error) {
	l.asked = append(l.asked, info.GroupResource.String()+" "+ns+"/"+info.Metric)
	return l.landing()
}

func (l *landings) LastExternalSample(_ context.Context, ns string, _ labels.Selector, info provider.ExternalMetricInfo) (time.Time, error) {
	l.asked = append(l.asked, "external "+ns+"/"+info.Metric)
	return l.landing()
}

func (l *landings) landing() (time.Time, error) {
	l.calls++
	if l.err != nil {
		return time.Time{}, l.err
	}
	now := l.clock.Now()
	return now.Add(-((now.Sub(t0)-l.phase)%l.every + l.every) % l.every), nil
}

func TestScrapeTrackerAsksWhileLearningThenOncePerRefresh(t *testing.T) {
	clk := testingclock.NewFakeClock(t0)
	src := &landings{clock: clk, every: 15 * time.Second, phase: 4 * time.Second}
	tr, err := NewScrapeTracker(ScrapeTrackerConfig{Source: src, Clock: clk, Refresh: 2 * time.Minute, Freshness: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	var c Cadence
	for range 3 { // rounds 15 s apart: learnt after the second
		if c, err = tr.Learn(ctx, tr.PodsLanding("ns", "qps", nil)); err != nil {
			t.Fatal(err)
		}
		clk.Step(15 * time.Second)
	}
	if c.Interval != 15*time.Second || (c.Last.Sub(t0)-4*time.Second)%(15*time.Second) != 0 {
		t.Fatalf("cadence = %+v, want interval 15s on the 4 s phase", c)
	}
	asked := src.calls
	for range 3 { // 45 s more: within the refresh, no question asked
		if _, err := tr.Learn(ctx, tr.PodsLanding("ns", "qps", nil)); err != nil {
			t.Fatal(err)
		}
		clk.Step(15 * time.Second)
	}
	if src.calls != asked {
		t.Errorf("calls within the refresh = %d, want 0", src.calls-asked)
	}
	clk.Step(time.Minute)
	if _, err := tr.Learn(ctx, tr.PodsLanding("ns", "qps", nil)); err != nil || src.calls != asked+1 {
		t.Errorf("after the refresh: calls %d, err %v; want one more call", src.calls-asked, err)
	}
	src.err = errors.New("prometheus down")
	clk.Step(2 * time.Minute)
	got, err := tr.Learn(ctx, tr.PodsLanding("ns", "qps", nil))
	if err == nil || got.Interval != 15*time.Second {
		t.Errorf("a failed ask = %+v, %v; want the known cadence and the error", got, err)
	}
}

func TestScrapeTrackerLearnsEachMetricKindApartFromItsOwnSeries(t *testing.T) {
	clk := testingclock.NewFakeClock(t0)
	src := &landings{clock: clk, every: 15 * time.Second, phase: 4 * time.Second}
	tr, err := NewScrapeTracker(ScrapeTrackerConfig{Source: src, Clock: clk, Freshness: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	svc := schema.GroupKind{Kind: "Service"}
	ns := schema.GroupKind{Kind: "Namespace"}
	for range 2 {
		for _, ask := range []func() (Cadence, error){
			func() (Cadence, error) { return tr.Learn(ctx, tr.PodsLanding("ns", "qps", nil)) },
			func() (Cadence, error) { return tr.Learn(ctx, tr.ObjectLanding("ns", svc, "qps", nil)) },
			func() (Cadence, error) { return tr.Learn(ctx, tr.ObjectLanding("ns", ns, "qps", nil)) },
			func() (Cadence, error) { return tr.Learn(ctx, tr.ExternalLanding("ns", "qps", nil)) },
		} {
			if _, err := ask(); err != nil {
				t.Fatal(err)
			}
		}
		clk.Step(15 * time.Second)
	}
	want := []string{"pods ns/qps", "service ns/qps", "namespace /qps", "external ns/qps"}
	if diff := cmp.Diff(append(want, want...), src.asked); diff != "" {
		t.Errorf("asked (-want +got):\n%s", diff)
	}
	for name, c := range map[string]func() (Cadence, error){
		"object":   func() (Cadence, error) { return tr.Learn(ctx, tr.ObjectLanding("ns", svc, "qps", nil)) },
		"external": func() (Cadence, error) { return tr.Learn(ctx, tr.ExternalLanding("ns", "qps", nil)) },
	} {
		got, err := c()
		if err != nil || got.Interval != 15*time.Second {
			t.Errorf("%s cadence = %+v, %v; want the 15 s interval learnt", name, got, err)
		}
	}
}

func TestKnownNeverWaitsForTheSourceAndLearnsInTheBackground(t *testing.T) {
	clk := testingclock.NewFakeClock(t0)
	release := make(chan struct{})
	src := &blockingLandings{landings: landings{clock: clk, every: 15 * time.Second, phase: 4 * time.Second}, release: release}
	tr, err := NewScrapeTracker(ScrapeTrackerConfig{Source: src, Clock: clk, Freshness: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	l := tr.PodsLanding("ns", "qps", nil)
	if got := tr.Known(t.Context(), l); got != (Cadence{}) {
		t.Errorf("Known while the source hangs = %+v, want nothing known yet", got)
	}
	close(release)
	var got Cadence
	for i := 0; i < 2; i++ { // two landings 15 s apart, each seen by a background check
		deadline := time.Now().Add(5 * time.Second)
		want := i + 1
		for src.answered() < want && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		tr.Wait()
		clk.Step(15 * time.Second)
		got = tr.Known(t.Context(), l)
	}
	if got.Last.IsZero() {
		t.Errorf("Known after the source answered = %+v, want its landing", got)
	}
}

// blockingLandings answers as landings once release is closed.
type blockingLandings struct {
	landings
	release chan struct{}
	mu      sync.Mutex
	n       int
}

func (b *blockingLandings) LastSample(ctx context.Context, ns string, info provider.CustomMetricInfo, sel labels.Selector) (time.Time, error) {
	<-b.release
	b.mu.Lock()
	defer b.mu.Unlock()
	b.n++
	return b.landings.LastSample(ctx, ns, info, sel)
}

func (b *blockingLandings) answered() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.n
}
