package controller

import (
	"math"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/prediction"
	"github.com/podpilot/podpilot/pkg/flight"
)

// gated returns a history source whose reads wait until the test ends.
func gated(t *testing.T, load func(time.Time) float64) *fakeHistory {
	h := &fakeHistory{Load: load, Gate: make(chan struct{})}
	t.Cleanup(func() { close(h.Gate) })
	return h
}

func TestARoundNeverWaitsForAFirstFitAndWritesItsReactiveScaleAndStatus(t *testing.T) {
	for _, mode := range []podpilotv1alpha1.PredictionMode{podpilotv1alpha1.PredictionScaleOut, podpilotv1alpha1.PredictionForecastOnly} {
		t.Run(string(mode), func(t *testing.T) {
			h := gated(t, eveningRush) // a history read that never answers within the round
			f := newFixture(t, qpsPerPod("4000", podNames(1)...), nil,
				append(seedPods(1), seedDeployment(1), seedAutoscaler(checkpointed(1), predicting(mode)))...)
			f.history = h
			f.restart()
			f.syncAt(now) // fails the test if the round's writes ran out of its deadline
			if got := f.replicas("deployment"); got != 2 {
				t.Errorf("replicas = %d, want the metrics' 2 (4000 qps over 2000 per pod), written this round", got)
			}
			pa := f.autoscaler()
			c := meta.FindStatusCondition(pa.Status.Conditions, podpilotv1alpha1.ConditionPredictionActive)
			if c == nil || c.Status != "False" || c.Reason != prediction.ReasonHistoryUnavailable || !strings.Contains(c.Message, "not ready yet") {
				t.Errorf("PredictionActive = %+v, want False HistoryUnavailable saying the forecast is not ready yet", c)
			}
			if pa.Status.DesiredReplicas != 2 {
				t.Errorf("status.desiredReplicas = %d, want 2: the status is written this round", pa.Status.DesiredReplicas)
			}
			if p := f.ctrl.models.Start(t.Context(), seedQPSPlan()); p.Served != flight.Joined {
				t.Errorf("the first fit is served %v, want it running in the background (joined)", p.Served)
			}
		})
	}
}

func TestARefusedFitIsNotRetriedBeforeItsRefreshAndItsRefitNeverHoldsUpARound(t *testing.T) {
	short := func(t time.Time) float64 {
		if now.Sub(t) > 24*time.Hour {
			return math.NaN()
		}
		return eveningRush(t)
	}
	h := &fakeHistory{Load: short}
	f := newPredictionFixture(t, h, predicting(podpilotv1alpha1.PredictionScaleOut))
	f.fitAt(now)
	// Rounds within the refresh, less its jitter.
	for at := now; at.Before(now.Add(time.Duration(float64(DefaultPredictionRefresh) * (1 - prediction.RefreshJitter)))); at = at.Add(15 * time.Second) {
		f.syncAt(at)
	}
	if got := condition(f.autoscaler(), podpilotv1alpha1.ConditionPredictionActive); got != "False HistoryTooShort" {
		t.Errorf("PredictionActive = %s (%s)", got, describe(f.autoscaler()))
	}
	if n := len(h.Requests()); n != 1 {
		t.Errorf("%d history reads in the rounds within the refresh, want 1: the refusal is held", n)
	}
	h.SetGate(make(chan struct{}))
	defer close(h.Gate)
	f.syncAt(now.Add(DefaultPredictionRefresh)) // the refit is due and held up at the gate
	if got := condition(f.autoscaler(), podpilotv1alpha1.ConditionPredictionActive); got != "False HistoryTooShort" {
		t.Errorf("PredictionActive while the refit runs = %s, want the refusal held", got)
	}
	if p := f.ctrl.models.Start(t.Context(), seedQPSPlan()); p.Served != flight.Joined {
		t.Errorf("the refit is served %v, want it running in the background (joined)", p.Served)
	}
}
