package controller

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/forecast"
)

// brokenPattern is eveningRush until a day before the fixture's now, then flat at 1000 qps: the
// last day broke the pattern (a holiday), so the load now, one lead later, forecasts it better
// than the daily pattern does.
func brokenPattern(t time.Time) float64 {
	if now.Sub(t) <= 24*time.Hour {
		return eveningRush(t.Add(-3 * time.Hour)) // 1000 qps, its noise, no rush
	}
	return eveningRush(t)
}

func TestAForecastNoBetterThanPersistenceStepsAsideWithBothErrorsInBothModes(t *testing.T) {
	for _, mode := range []podpilotv1alpha1.PredictionMode{podpilotv1alpha1.PredictionScaleOut, podpilotv1alpha1.PredictionForecastOnly} {
		t.Run(string(mode), func(t *testing.T) {
			f := newPredictionFixture(t, &fakeHistory{Load: brokenPattern}, predicting(mode))
			f.fitAt(now)
			f.syncAt(now)
			pa := f.autoscaler()
			c := meta.FindStatusCondition(pa.Status.Conditions, podpilotv1alpha1.ConditionPredictionActive)
			if c == nil || c.Status != "False" || c.Reason != forecast.ReasonNoBetterThanPersistence ||
				!strings.Contains(c.Message, "against persistence's") || !strings.Contains(c.Message, "seasonal-naive's") {
				t.Errorf("PredictionActive = %+v, want False NoBetterThanPersistence with the model's and persistence's WAPE", c)
			}
			if got := f.replicas("deployment"); got != 1 {
				t.Errorf("replicas = %d, want the metrics' 1: the forecast that does not earn its place does not act", got)
			}
			if ld := pa.Status.LastDecision; ld != nil && strings.Contains(ld.Winner, "forecast") {
				t.Errorf("status.lastDecision = %+v, want no forecast in it", ld)
			}
		})
	}
}

// smallRush is eveningRush until the fixture's now, then a rush a quarter its size (to 3000 qps,
// not 9000): 15 minutes later the forecast of the usual rush has missed by far more than
// persistence over the recent window, while over the day it still beats persistence.
func smallRush(t time.Time) float64 {
	if !t.Before(now) {
		return 1000 + (eveningRush(t)-1000)/4
	}
	return eveningRush(t)
}

func TestAForecastThatFailsTheRecentWindowStepsAsideNamingTheWindowWithBothErrors(t *testing.T) {
	later := now.Add(15 * time.Minute)
	for _, mode := range []podpilotv1alpha1.PredictionMode{podpilotv1alpha1.PredictionScaleOut, podpilotv1alpha1.PredictionForecastOnly} {
		t.Run(string(mode), func(t *testing.T) {
			f := newPredictionFixture(t, &fakeHistory{Load: smallRush}, predicting(mode))
			f.fitAt(later)
			f.syncAt(later)
			pa := f.autoscaler()
			c := meta.FindStatusCondition(pa.Status.Conditions, podpilotv1alpha1.ConditionPredictionActive)
			if c == nil || c.Status != "False" || c.Reason != forecast.ReasonNoBetterThanPersistence ||
				!strings.Contains(c.Message, "over the recent window (the last 2h0m0s)") || !strings.Contains(c.Message, "against persistence's") ||
				!strings.Contains(c.Message, "over the day") {
				t.Errorf("PredictionActive = %+v, want False NoBetterThanPersistence naming the recent window, with the model's and persistence's WAPE there and over the day", c)
			}
			if ld := pa.Status.LastDecision; ld != nil && strings.Contains(ld.Winner, "forecast") {
				t.Errorf("status.lastDecision = %+v, want no forecast in it", ld)
			}
		})
	}
}
