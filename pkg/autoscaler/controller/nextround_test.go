package controller

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/metrics"
)

// scrapeEvery is a SampleTimeSource whose data lands every interval at phase after now.
type scrapeEvery struct {
	clock           *clocktesting.FakeClock
	interval, phase time.Duration
}

func (s scrapeEvery) LastSample(_ context.Context, _ string, info provider.CustomMetricInfo, _ labels.Selector) (time.Time, error) {
	if info.GroupResource.Resource != "pods" {
		return s.landing(s.phase + 5*time.Second), nil // an object metric's series land 5 s later
	}
	return s.landing(s.phase), nil
}

func (s scrapeEvery) LastExternalSample(context.Context, string, labels.Selector, provider.ExternalMetricInfo) (time.Time, error) {
	return s.landing(s.phase + 10*time.Second), nil // an external metric's series land 10 s later
}

// landing is the newest landing of data scraped every interval at phase after now.
func (s scrapeEvery) landing(phase time.Duration) time.Time {
	since := s.clock.Now().Sub(now.Add(phase))
	return s.clock.Now().Add(-((since%s.interval + s.interval) % s.interval))
}

func TestNextRoundFollowsTheLandingsOfTheFirstPrometheusMetric(t *testing.T) {
	onlyObject := func(pa *podpilotv1alpha1.PodAutoscaler) {
		everyKind(pa)
		pa.Spec.CustomMetrics, pa.Spec.ExternalMetrics = nil, nil
	}
	onlyExternal := func(pa *podpilotv1alpha1.PodAutoscaler) {
		everyKind(pa)
		pa.Spec.CustomMetrics, pa.Spec.ObjectMetrics = nil, nil
	}
	tests := []struct {
		name   string
		align  bool
		pa     *podpilotv1alpha1.PodAutoscaler
		rounds []time.Duration // delays returned at rounds 15 s apart
	}{
		// Landings at 4 s, 19 s, 34 s...: each round's background check sees one, so the cadence is
		// learnt after the second round (15 s), and the third (30 s) moves the fourth to 49.5 s, the
		// landing plus margin nearest 45 s; every round after is 15 s apart.
		{name: "aligned: learnt from the first two rounds' checks, then margin after each landing",
			align: true, pa: seedAutoscaler(),
			rounds: []time.Duration{15 * time.Second, 15 * time.Second, 19500 * time.Millisecond, 15 * time.Second, 15 * time.Second}},
		// Object landings at 9 s, 24 s, 39 s...: the fourth round moves to 39.5 s, the nearest to 45 s.
		{name: "object metrics only: margin after each landing of the object metric",
			align: true, pa: seedAutoscaler(onlyObject),
			rounds: []time.Duration{15 * time.Second, 15 * time.Second, 9500 * time.Millisecond, 15 * time.Second}},
		// External landings at 14 s, 29 s, 44 s...: the fourth round moves to 44.5 s.
		{name: "external metrics only: margin after each landing of the external metric",
			align: true, pa: seedAutoscaler(onlyExternal),
			rounds: []time.Duration{15 * time.Second, 15 * time.Second, 14500 * time.Millisecond, 15 * time.Second}},
		{name: "pods metric first: the pods metric's landings, whatever else the spec has",
			align: true, pa: seedAutoscaler(everyKind),
			rounds: []time.Duration{15 * time.Second, 15 * time.Second, 19500 * time.Millisecond, 15 * time.Second}},
		{name: "syncPeriodSeconds 5, alignment off: every 5 s", pa: seedAutoscaler(syncEvery(5)),
			rounds: []time.Duration{5 * time.Second, 5 * time.Second, 5 * time.Second}},
		{name: "syncPeriodSeconds 60, alignment off: every 60 s", pa: seedAutoscaler(syncEvery(60)),
			rounds: []time.Duration{time.Minute, time.Minute}},
		// Landings every 15 s at 4 s: a 5 s period takes every third of the landing grid divided
		// in 5 s steps, margin after it: 4.5 s, 9.5 s, 14.5 s... once learnt.
		{name: "syncPeriodSeconds 5, aligned: 5 s apart, margin after the landing grid divided into 5 s steps",
			align: true, pa: seedAutoscaler(syncEvery(5)),
			rounds: []time.Duration{5 * time.Second, 5 * time.Second, 5 * time.Second, 4500 * time.Millisecond, 5 * time.Second, 5 * time.Second}},
		{name: "alignment off: the sync period", pa: seedAutoscaler(),
			rounds: []time.Duration{15 * time.Second, 15 * time.Second, 15 * time.Second}},
		{name: "resource metrics only: the sync period", align: true,
			pa:     seedAutoscaler(func(pa *podpilotv1alpha1.PodAutoscaler) { pa.Spec.CustomMetrics = nil }),
			rounds: []time.Duration{15 * time.Second, 15 * time.Second, 15 * time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(now)
			opts := *NewOptions()
			opts.AlignToScrapes = tt.align
			tr, err := newScrapeTracker(Config{Options: opts, Clock: clk, SampleTimes: scrapeEvery{clock: clk, interval: 15 * time.Second, phase: 4 * time.Second}})
			if err != nil {
				t.Fatal(err)
			}
			c := &Controller{opts: opts, clock: clk, scrapes: tr}
			for i, want := range tt.rounds {
				got := c.nextRound(t.Context(), tt.pa)
				if tr != nil {
					tr.Wait() // the cadence is checked in the background; the next round sees it
				}
				if got != want {
					t.Errorf("round %d: next in %s, want %s", i, got, want)
				}
				clk.Step(got)
			}
		})
	}
}

var _ metrics.SampleTimeSource = scrapeEvery{}

// syncEvery sets spec.behavior.syncPeriodSeconds.
func syncEvery(seconds int32) func(*podpilotv1alpha1.PodAutoscaler) {
	return func(pa *podpilotv1alpha1.PodAutoscaler) {
		pa.Spec.Behavior = &podpilotv1alpha1.PodAutoscalerBehavior{SyncPeriodSeconds: &seconds}
	}
}

// TestAOneSecondPeriodOnOneSecondScrapesFollowsEveryLanding (KEP-6003): a PodAutoscaler with
// syncPeriodSeconds 1 on a metric scraped every second runs a round after every landing. The
// next round is placed when a round ends, a few milliseconds after the landing it followed; a
// shortest gap of a whole second pushed every next round one landing further, to 2 s apart.
func TestAOneSecondPeriodOnOneSecondScrapesFollowsEveryLanding(t *testing.T) {
	clk := clocktesting.NewFakeClock(now)
	opts := *NewOptions()
	tr, err := newScrapeTracker(Config{Options: opts, Clock: clk, SampleTimes: scrapeEvery{clock: clk, interval: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	c := &Controller{opts: opts, clock: clk, scrapes: tr}
	pa := seedAutoscaler(syncEvery(1))
	const roundTakes = 3 * time.Millisecond
	var gaps []time.Duration
	for range 30 {
		clk.Step(roundTakes)
		next := c.nextRound(t.Context(), pa)
		tr.Wait()
		gaps = append(gaps, roundTakes+next)
		clk.Step(next)
	}
	for i, g := range gaps[20:] { // once the cadence is learnt and the rounds moved onto it
		if g != time.Second {
			t.Errorf("round %d: %s after the one before, want 1s (all: %v)", i+20, g, gaps)
		}
	}
}
