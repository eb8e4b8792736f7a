package main

import (
	"errors"
	"math"
	"testing"
	"time"
)

func TestReactionOfTakesTheFirstLookReachingEachStage(t *testing.T) {
	nan := math.NaN()
	s := func(at float64, metric float64, replicas int32, ready int) sample {
		return sample{At: time.Duration(at * float64(time.Second)), Metric: metric, Replicas: replicas, Ready: ready}
	}
	for _, tc := range []struct {
		name    string
		samples []sample
		want    reaction
		wantErr bool
	}{
		{
			name: "stages in order: lag, decision, start-up add up to the total",
			samples: []sample{
				s(0, 1000, 1, 1), s(5, 1500, 1, 1), s(12, 2500, 1, 1), s(20, 2600, 4, 1), s(27, 2100, 4, 3), s(29, 2000, 4, 4), s(60, 2000, 4, 4),
			},
			want: reaction{Before: 1, After: 4, Metric: 12 * time.Second, Scaled: 20 * time.Second, Ready: 29 * time.Second},
		},
		{
			name: "two decisions: scaled is when the replicas first reach their final value",
			samples: []sample{
				s(0, 1000, 1, 1), s(10, 3000, 1, 1), s(15, nan, 2, 1), s(22, nan, 2, 2), s(30, 2600, 4, 2), s(38, 2000, 4, 4), s(80, 2000, 4, 4),
			},
			want: reaction{Before: 1, After: 4, Metric: 10 * time.Second, Scaled: 30 * time.Second, Ready: 38 * time.Second},
		},
		{
			name:    "a look without a metric read never counts as the metric's",
			samples: []sample{s(0, nan, 1, 1), s(3, nan, 2, 1), s(9, 2500, 2, 2), s(50, 2000, 2, 2)},
			want:    reaction{Before: 1, After: 2, Metric: 9 * time.Second, Scaled: 3 * time.Second, Ready: 9 * time.Second},
		},
		{
			name:    "a ready count that dips later keeps the first time it was reached",
			samples: []sample{s(0, 3000, 1, 1), s(8, 3000, 3, 1), s(14, 2000, 3, 3), s(20, 2000, 3, 2), s(40, 2000, 3, 3)},
			want:    reaction{Before: 1, After: 3, Metric: 0, Scaled: 8 * time.Second, Ready: 14 * time.Second},
		},
		{
			name:    "no scale-up is an error",
			samples: []sample{s(0, 3000, 1, 1), s(60, 3000, 1, 1)},
			wantErr: true,
		},
		{
			name:    "pods never all ready is an error",
			samples: []sample{s(0, 3000, 1, 1), s(8, 3000, 3, 1), s(60, 3000, 3, 2)},
			wantErr: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := reactionOf(tc.samples, 2200, 1)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("reactionOf = %+v, want an error", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("reactionOf: %v", err)
			}
			if got != tc.want {
				t.Fatalf("reactionOf = %+v, want %+v", got, tc.want)
			}
			if sum := got.Lag() + got.Decision() + got.Startup(); sum != got.Ready {
				t.Fatalf("lag+decision+start-up = %s, want the total %s", sum, got.Ready)
			}
		})
	}
}

func TestReactionOfNoScaleUpWrapsErrNoScaleUp(t *testing.T) {
	_, err := reactionOf([]sample{{Replicas: 1, Ready: 1, Metric: 3000}}, 2200, 1)
	if !errors.Is(err, errNoScaleUp) {
		t.Fatalf("err = %v, want errNoScaleUp", err)
	}
}

func TestPhaseOffsetSpreadsFiveStepsOverTheSyncPeriod(t *testing.T) {
	want := []time.Duration{0, 3 * time.Second, 6 * time.Second, 9 * time.Second, 12 * time.Second, 0}
	for i, w := range want {
		if got := phaseOffset(i, 15*time.Second); got != w {
			t.Errorf("phaseOffset(%d, 15s) = %s, want %s", i, got, w)
		}
	}
}

func TestSummarizeGivesEachStagesMedianAndWorst(t *testing.T) {
	r := func(metric, scaled, ready int) reaction {
		return reaction{Metric: time.Duration(metric) * time.Second, Scaled: time.Duration(scaled) * time.Second, Ready: time.Duration(ready) * time.Second}
	}
	got := summarize([]reaction{r(10, 20, 30), r(5, 30, 36), r(20, 25, 32)})
	want := [4]stageSummary{
		{Median: 32 * time.Second, Worst: 36 * time.Second}, // total
		{Median: 10 * time.Second, Worst: 20 * time.Second}, // lag
		{Median: 10 * time.Second, Worst: 25 * time.Second}, // decision: 10, 25, 5
		{Median: 7 * time.Second, Worst: 10 * time.Second},  // start-up: 10, 6, 7
	}
	if got != want {
		t.Fatalf("summarize = %+v, want %+v", got, want)
	}
	if empty := summarize(nil); empty[0].Median >= 0 {
		t.Fatalf("summarize(nil) total median = %s, want n/a (negative)", empty[0].Median)
	}
}

func TestRatioSaysNAWithoutBothFigures(t *testing.T) {
	if got := ratio(9*time.Second, 30*time.Second); got != "0.30×" {
		t.Errorf("ratio(9s, 30s) = %q", got)
	}
	if got := ratio(-1, 30*time.Second); got != "n/a" {
		t.Errorf("ratio(n/a, 30s) = %q", got)
	}
	if got := ratio(9*time.Second, 0); got != "n/a" {
		t.Errorf("ratio(9s, 0) = %q", got)
	}
}
