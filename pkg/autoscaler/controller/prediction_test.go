package controller

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/autoscalertest"
	"github.com/podpilot/podpilot/pkg/autoscaler/decision"
	"github.com/podpilot/podpilot/pkg/autoscaler/metrics"
	"github.com/podpilot/podpilot/pkg/autoscaler/prediction"
)

// fakeHistory, eveningRush and predicting are the tests' shared history fixtures.
type fakeHistory = autoscalertest.History

var (
	eveningRush = autoscalertest.EveningRush
	predicting  = autoscalertest.Predicting
)

// newPredictionFixture is the seed on one pod at 1000 qps (1 replica's worth) with history.
func newPredictionFixture(t *testing.T, h *fakeHistory, mutate ...func(*podpilotv1alpha1.PodAutoscaler)) *fixture {
	t.Helper()
	f := newFixture(t, qpsPerPod("1000", podNames(1)...), nil,
		append(seedPods(1), seedDeployment(1), seedAutoscaler(append([]func(*podpilotv1alpha1.PodAutoscaler){checkpointed(1)}, mutate...)...))...)
	f.history = h
	f.restart()
	return f
}

// fitAt starts, at at, the fits of the histories of every PodAutoscaler of the fixture and waits
// for them, as the rounds before at would have (a round never waits for a fit).
func (f *fixture) fitAt(at time.Time) {
	f.t.Helper()
	f.clock.SetTime(at)
	pas, err := f.podpilot.AutoscalingV1alpha1().PodAutoscalers(ns).List(f.t.Context(), metav1.ListOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	for i := range pas.Items {
		for _, p := range prediction.Plans(&pas.Items[i]) {
			_, _ = f.ctrl.models.Start(f.t.Context(), p).Wait(f.t.Context()) // a failed read is the rounds' to see
		}
	}
}

func TestScaleOutRaisesTheReplicasForTheLoadForecastOneLeadAhead(t *testing.T) {
	h := &fakeHistory{Load: eveningRush}
	f := newPredictionFixture(t, h, predicting(podpilotv1alpha1.PredictionScaleOut))
	f.fitAt(now)
	f.syncAt(now)
	pa := f.autoscaler()
	if got := f.replicas("deployment"); got != 4 {
		t.Errorf("replicas = %d, want 4: the forecast 9000 qps in 10m over 2000 per pod (5), limited to 4 from 1 by the scale-up limit", got)
	}
	if got := condition(pa, podpilotv1alpha1.ConditionPredictionActive); got != "True ForecastRaised" {
		t.Errorf("PredictionActive = %s (%s)", got, describe(pa))
	}
	p := pa.Status.Prediction
	if p == nil || p.Replicas < 5 || p.LeadTimeSeconds != 600 || p.Model != "HoltWinters" || p.FittedTime == nil || len(p.Metrics) != 1 {
		t.Fatalf("status.prediction = %+v", p)
	}
	if v := p.Metrics[0].Value.AsApproximateFloat64(); v < 8000 || v > 11000 {
		t.Errorf("forecast load = %g, want about 9000 (and its headroom)", v)
	}
	if p.Metrics[0].Replicas != p.Replicas {
		t.Errorf("status.prediction.metrics[0].replicas = %d, want the one metric's %d", p.Metrics[0].Replicas, p.Replicas)
	}
	ld := pa.Status.LastDecision
	if ld == nil || ld.FromReplicas != 1 || ld.ToReplicas != 4 || !strings.HasPrefix(ld.Winner, "forecast of") ||
		!cmp.Equal(ld.Changes, []string{"ScaleUpLimit: 5 to 4"}) {
		t.Errorf("status.lastDecision = %+v, want 1 to 4 won by the forecast, limited by the scale-up limit", ld)
	}
	reqs := h.Requests()
	want := metrics.HistoryRequest{Namespace: ns, Metric: "zdns_vanguard_qps", Resource: schema.GroupResource{Resource: "pods"},
		Names: "vg1-vanguard-[a-z0-9]+-[a-z0-9]+", Selector: labels.Everything(),
		Start: now.Add(-72*time.Hour - 30*time.Second), End: now.Add(-30 * time.Second), Step: time.Minute}
	if diff := cmp.Diff([]metrics.HistoryRequest{want}, reqs, cmp.Comparer(func(a, b labels.Selector) bool { return a.String() == b.String() })); diff != "" {
		t.Errorf("history requests (-want +got):\n%s", diff)
	}
}

func TestForecastOnlyWritesNoScaleAndSaysWhatItWouldHaveDone(t *testing.T) {
	f := newPredictionFixture(t, &fakeHistory{Load: eveningRush}, predicting(podpilotv1alpha1.PredictionForecastOnly))
	f.fitAt(now)
	f.syncAt(now)
	pa := f.autoscaler()
	if got := f.replicas("deployment"); got != 1 {
		t.Errorf("replicas = %d, want 1: ForecastOnly never scales", got)
	}
	if n := f.scaleCalls()["update"]; n != 0 {
		t.Errorf("%d scale updates, want 0", n)
	}
	c := meta.FindStatusCondition(pa.Status.Conditions, podpilotv1alpha1.ConditionPredictionActive)
	if c == nil || c.Reason != prediction.ReasonForecastOnly || !strings.Contains(c.Message, "would have scaled to 4") {
		t.Errorf("PredictionActive = %+v, want ForecastOnly saying it would have scaled to 4", c)
	}
	if ld := pa.Status.LastDecision; ld == nil || ld.ToReplicas != 4 || ld.FromReplicas != 1 || !strings.Contains(ld.Winner, "not applied (ForecastOnly)") {
		t.Errorf("status.lastDecision = %+v, want what the forecast would have done, 1 to 4", ld)
	}
}

func TestAHistoryTooShortTurnsTheForecastOffWithTheRefusalsReason(t *testing.T) {
	short := func(t time.Time) float64 {
		if now.Sub(t) > 24*time.Hour {
			return math.NaN()
		}
		return eveningRush(t)
	}
	f := newPredictionFixture(t, &fakeHistory{Load: short}, predicting(podpilotv1alpha1.PredictionScaleOut))
	f.fitAt(now)
	f.syncAt(now)
	pa := f.autoscaler()
	if got := condition(pa, podpilotv1alpha1.ConditionPredictionActive); got != "False HistoryTooShort" {
		t.Errorf("PredictionActive = %s (%s)", got, describe(pa))
	}
	if got := f.replicas("deployment"); got != 1 {
		t.Errorf("replicas = %d, want the metrics' 1", got)
	}
}

func TestAnUnreadableHistoryTurnsTheForecastOffAndIsReadAgainAfterAMinute(t *testing.T) {
	h := &fakeHistory{Load: eveningRush, Err: errProm}
	f := newPredictionFixture(t, h, predicting(podpilotv1alpha1.PredictionScaleOut))
	f.fitAt(now)
	f.syncAt(now)
	f.syncAt(now.Add(15 * time.Second))
	pa := f.autoscaler()
	if got := condition(pa, podpilotv1alpha1.ConditionPredictionActive); got != "False HistoryUnavailable" {
		t.Errorf("PredictionActive = %s (%s)", got, describe(pa))
	}
	if got := f.replicas("deployment"); got != 1 {
		t.Errorf("replicas = %d, want the metrics' 1", got)
	}
	if n := len(h.Requests()); n != 1 {
		t.Errorf("%d history reads in two rounds within a minute, want 1", n)
	}
	h.SetErr(nil)
	f.fitAt(now.Add(prediction.HistoryRetry + time.Second))
	f.syncAt(now.Add(prediction.HistoryRetry + time.Second))
	if got := condition(f.autoscaler(), podpilotv1alpha1.ConditionPredictionActive); !strings.HasPrefix(got, "True") {
		t.Errorf("PredictionActive a minute later = %s, want True", got)
	}
}

func TestTurningPredictionOffClearsItsStatusAndCondition(t *testing.T) {
	f := newPredictionFixture(t, &fakeHistory{Load: eveningRush}, predicting(podpilotv1alpha1.PredictionForecastOnly))
	f.fitAt(now)
	f.syncAt(now)
	pa := f.autoscaler()
	pa.Spec.Prediction.Mode, pa.Generation = podpilotv1alpha1.PredictionOff, pa.Generation+1
	if _, err := f.podpilot.AutoscalingV1alpha1().PodAutoscalers(ns).Update(t.Context(), pa, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.syncAt(now.Add(15 * time.Second))
	pa = f.autoscaler()
	if pa.Status.Prediction != nil || meta.FindStatusCondition(pa.Status.Conditions, podpilotv1alpha1.ConditionPredictionActive) != nil {
		t.Errorf("status.prediction = %+v, PredictionActive = %+v; want neither", pa.Status.Prediction, meta.FindStatusCondition(pa.Status.Conditions, podpilotv1alpha1.ConditionPredictionActive))
	}
}

// seedQPSPlan is the plan of the seed's zdns_vanguard_qps history over three days (its
// predicting spec's).
func seedQPSPlan() prediction.Plan {
	plans := prediction.Plans(seedAutoscaler(predicting(podpilotv1alpha1.PredictionScaleOut)))
	return plans[decision.MetricID{Kind: decision.PodsMetric, Name: "zdns_vanguard_qps"}]
}

func describe(pa *podpilotv1alpha1.PodAutoscaler) string {
	var b strings.Builder
	for _, c := range pa.Status.Conditions {
		b.WriteString(c.Type + "=" + string(c.Status) + " " + c.Reason + ": " + c.Message + "; ")
	}
	return b.String()
}

func TestTheForecastIsExportedPerPodAutoscalerFromItsStatus(t *testing.T) {
	pa := seedAutoscaler(predicting(podpilotv1alpha1.PredictionForecastOnly), func(pa *podpilotv1alpha1.PodAutoscaler) {
		pa.Status.Prediction = &podpilotv1alpha1.PredictionStatus{Replicas: 5, Metrics: []podpilotv1alpha1.MetricForecast{
			{Type: podpilotv1alpha1.CustomMetricSourceType, Name: "zdns_vanguard_qps", Value: ptr.To(resource.MustParse("9500")), WAPEPercent: ptr.To[int32](7)}}}
	})
	f, reg := metricsFixture(t, qpsPerPod("1000", podNames(1)...), true, pa)
	f.seedCaches()
	f.ctrl.running.Store(true)
	want := []string{
		"podpilot_podautoscaler_forecast_load{container=,metric=zdns_vanguard_qps,metric_type=Custom,name=hpa-vg1-vanguard,namespace=dns,object=} 9500",
		"podpilot_podautoscaler_forecast_replicas{name=hpa-vg1-vanguard,namespace=dns} 5",
		"podpilot_podautoscaler_forecast_wape_ratio{container=,metric=zdns_vanguard_qps,metric_type=Custom,name=hpa-vg1-vanguard,namespace=dns,object=} 0.07",
	}
	got := series(t, reg, "podpilot_podautoscaler_forecast_load", "podpilot_podautoscaler_forecast_replicas", "podpilot_podautoscaler_forecast_wape_ratio")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("series (-want +got):\n%s", diff)
	}
}
