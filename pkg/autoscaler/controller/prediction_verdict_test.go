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

// smallRush is eveningRush until the fixture's now, then a rush a quarter its size (to 3000 qps,
// not 9000): 15 minutes later the forecast of the usual rush has missed by far more than
// persistence over the recent window, while over the day it still beats persistence.
func smallRush(t time.Time) float64 {
	if !t.Before(now) {
		return 1000 + (eveningRush(t)-1000)/4
	}
	return eveningRush(t)
}

// TestAForecastThatDoesNotEarnItsPlaceStepsAsideNamingTheWindowInBothModes: a model no better than
// persistence over the day, or over the recent window where it errs well beyond its day, does not
// act (ScaleOut) or show as acting (ForecastOnly): PredictionActive is False with
// NoBetterThanPersistence and a message naming the window and the errors there, and the round's
// decision is the metrics' alone.
func TestAForecastThatDoesNotEarnItsPlaceStepsAsideNamingTheWindowInBothModes(t *testing.T) {
	for _, c := range []struct {
		name     string
		load     func(time.Time) float64
		at       time.Time
		message  []string
		replicas int32 // 0: not checked
	}{
		{name: "no better over the day", load: brokenPattern, at: now, replicas: 1,
			message: []string{"over the day (the last 24h0m0s)", "against persistence's", "seasonal-naive's"}},
		{name: "no better over the recent window", load: smallRush, at: now.Add(15 * time.Minute),
			message: []string{"over the recent window (the last 2h0m0s)", "against persistence's", "(over the day "}},
	} {
		for _, mode := range []podpilotv1alpha1.PredictionMode{podpilotv1alpha1.PredictionScaleOut, podpilotv1alpha1.PredictionForecastOnly} {
			t.Run(c.name+"/"+string(mode), func(t *testing.T) {
				f := newPredictionFixture(t, &fakeHistory{Load: c.load}, predicting(mode))
				f.fitAt(c.at)
				f.syncAt(c.at)
				pa := f.autoscaler()
				cond := meta.FindStatusCondition(pa.Status.Conditions, podpilotv1alpha1.ConditionPredictionActive)
				if cond == nil || cond.Status != "False" || cond.Reason != forecast.ReasonNoBetterThanPersistence {
					t.Fatalf("PredictionActive = %+v, want False NoBetterThanPersistence", cond)
				}
				for _, m := range c.message {
					if !strings.Contains(cond.Message, m) {
						t.Errorf("PredictionActive's message %q lacks %q", cond.Message, m)
					}
				}
				if got := f.replicas("deployment"); c.replicas > 0 && got != c.replicas {
					t.Errorf("replicas = %d, want the metrics' %d: the forecast that does not earn its place does not act", got, c.replicas)
				}
				if ld := pa.Status.LastDecision; ld != nil && strings.Contains(ld.Winner, "forecast") {
					t.Errorf("status.lastDecision = %+v, want no forecast in it", ld)
				}
			})
		}
	}
}
