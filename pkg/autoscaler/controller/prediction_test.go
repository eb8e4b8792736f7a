package controller

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
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
	"github.com/podpilot/podpilot/pkg/autoscaler/metrics"
	"github.com/podpilot/podpilot/pkg/podcache"
)

// fakeHistory serves a history from a load function of time; err fails every read. It records
// the requests.
type fakeHistory struct {
	mu   sync.Mutex
	load func(time.Time) float64
	err  error
	reqs []metrics.HistoryRequest
	// gate, when set, holds every read until it is closed.
	gate chan struct{}
}

func (h *fakeHistory) read(req metrics.HistoryRequest) ([]float64, error) {
	h.mu.Lock()
	h.reqs = append(h.reqs, req)
	gate := h.gate
	h.mu.Unlock()
	if gate != nil {
		<-gate
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err != nil {
		return nil, h.err
	}
	var out []float64
	for t := req.Start; !t.After(req.End); t = t.Add(req.Step) {
		out = append(out, h.load(t.Add(-req.Step/2))) // the value at t is the load around t - step/2
	}
	return out, nil
}

func (h *fakeHistory) ObjectsHistory(_ context.Context, req metrics.HistoryRequest) ([]float64, error) {
	return h.read(req)
}

func (h *fakeHistory) ExternalHistory(_ context.Context, req metrics.HistoryRequest) ([]float64, error) {
	return h.read(req)
}

func (h *fakeHistory) requests() []metrics.HistoryRequest {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]metrics.HistoryRequest(nil), h.reqs...)
}

// eveningRush is a daily load in qps over the seed's pods: 1000 until 21:02 UTC (the fixture's
// now is 21:00), rising to 9000 by 21:07 and back to 1000 at 23:00, with a little noise.
func eveningRush(t time.Time) float64 {
	h := float64(t.UTC().Hour()) + float64(t.UTC().Minute())/60
	v := 1000.0
	switch {
	case h >= 21+2.0/60 && h < 21+7.0/60:
		v += 8000 * (h - 21 - 2.0/60) / (5.0 / 60)
	case h >= 21+7.0/60 && h < 23:
		v = 9000
	}
	return v * (1 + 0.01*math.Sin(float64(t.Unix()/60)*1.7))
}

// predicting sets spec.prediction with a 10-minute lead time: at 21:10 the rush is at 9000.
func predicting(mode podpilotv1alpha1.PredictionMode) func(*podpilotv1alpha1.PodAutoscaler) {
	return func(pa *podpilotv1alpha1.PodAutoscaler) {
		pa.Spec.Prediction = &podpilotv1alpha1.PredictionSpec{Mode: mode, HistoryDays: ptr.To[int32](3), LeadTimeSeconds: ptr.To[int32](600)}
	}
}

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
		for _, p := range historyPlans(&pas.Items[i]) {
			_, _ = f.ctrl.models.start(f.t.Context(), p).Wait(f.t.Context()) // a failed read is the rounds' to see
		}
	}
}

func TestScaleOutRaisesTheReplicasForTheLoadForecastOneLeadAhead(t *testing.T) {
	h := &fakeHistory{load: eveningRush}
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
	reqs := h.requests()
	want := metrics.HistoryRequest{Namespace: ns, Metric: "zdns_vanguard_qps", Resource: schema.GroupResource{Resource: "pods"},
		Names: "vg1-vanguard-[a-z0-9]+-[a-z0-9]+", Selector: labels.Everything(),
		Start: now.Add(-72*time.Hour - 30*time.Second), End: now.Add(-30 * time.Second), Step: time.Minute}
	if diff := cmp.Diff([]metrics.HistoryRequest{want}, reqs, cmp.Comparer(func(a, b labels.Selector) bool { return a.String() == b.String() })); diff != "" {
		t.Errorf("history requests (-want +got):\n%s", diff)
	}
}

func TestForecastOnlyWritesNoScaleAndSaysWhatItWouldHaveDone(t *testing.T) {
	f := newPredictionFixture(t, &fakeHistory{load: eveningRush}, predicting(podpilotv1alpha1.PredictionForecastOnly))
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
	if c == nil || c.Reason != ReasonForecastOnly || !strings.Contains(c.Message, "would have scaled to 4") {
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
	f := newPredictionFixture(t, &fakeHistory{load: short}, predicting(podpilotv1alpha1.PredictionScaleOut))
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
	h := &fakeHistory{load: eveningRush, err: errProm}
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
	if n := len(h.requests()); n != 1 {
		t.Errorf("%d history reads in two rounds within a minute, want 1", n)
	}
	h.mu.Lock()
	h.err = nil
	h.mu.Unlock()
	f.fitAt(now.Add(historyRetry + time.Second))
	f.syncAt(now.Add(historyRetry + time.Second))
	if got := condition(f.autoscaler(), podpilotv1alpha1.ConditionPredictionActive); !strings.HasPrefix(got, "True") {
		t.Errorf("PredictionActive a minute later = %s, want True", got)
	}
}

func TestTurningPredictionOffClearsItsStatusAndCondition(t *testing.T) {
	f := newPredictionFixture(t, &fakeHistory{load: eveningRush}, predicting(podpilotv1alpha1.PredictionForecastOnly))
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

func TestModelsAreSharedPerDistinctHistoryAndARefitReadsOnlyTheTail(t *testing.T) {
	h := &fakeHistory{load: eveningRush}
	f := newPredictionFixture(t, h)
	p := seedQPSPlan()
	waitForFit(t, f.ctrl.models, p, now)
	for range 10 { // ten PodAutoscalers' rounds on the same metric and selector
		if _, err := f.ctrl.models.get(t.Context(), p); err != nil {
			t.Fatal(err)
		}
	}
	f.clock.Step(2 * historyRetry)
	if _, err := f.ctrl.models.get(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	if n := len(h.requests()); n != 1 {
		t.Errorf("%d history reads within the refresh, want 1: the fit is reused", n)
	}
	f.clock.Step(DefaultPredictionRefresh - 2*historyRetry)
	if _, err := f.ctrl.models.get(t.Context(), p); err != nil { // starts the refit
		t.Fatal(err)
	}
	got := waitForFit(t, f.ctrl.models, p, now.Add(DefaultPredictionRefresh))
	if got.model == nil {
		t.Fatalf("refit: %+v", got)
	}
	reqs := h.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d history reads, want 2: one per refresh", len(reqs))
	}
	if values := reqs[1].End.Sub(reqs[1].Start)/time.Minute + 1; values != 7 {
		t.Errorf("the refit read %d values, want 7: the 5 minutes since and the 2 read again", values)
	}
}

// seedQPSPlan is the plan of the seed's zdns_vanguard_qps history over three days.
func seedQPSPlan() historyPlan {
	key := modelKey{window: 72 * time.Hour}
	key.Namespace, key.Metric, key.Selector = ns, "Pods/zdns_vanguard_qps", "vg1-vanguard-[a-z0-9]+-[a-z0-9]+;"
	return historyPlan{key: key, req: metrics.HistoryRequest{Namespace: ns, Metric: "zdns_vanguard_qps"}}
}

// waitForFit starts p's fit, or joins the one running, and waits for it: it must be one made at
// or after at.
func waitForFit(t *testing.T, m *models, p historyPlan, at time.Time) fit {
	t.Helper()
	a, err := m.start(t.Context(), p).Wait(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if a.Value.at.Before(at) {
		t.Fatalf("no fit made at or after %s; the one answered is from %s", at, a.Value.at)
	}
	return a.Value
}

// TestADueRefitNeverHoldsUpARound: once a model is held, its refit runs in the background while
// the held model answers the rounds, for up to maxStaleFits refreshes past its refresh; past
// that the forecast is off until the refit lands, and the round still does not wait.
func TestADueRefitNeverHoldsUpARound(t *testing.T) {
	h := &fakeHistory{load: eveningRush}
	f := newPredictionFixture(t, h)
	p := seedQPSPlan()
	first := waitForFit(t, f.ctrl.models, p, now)
	if first.model == nil {
		t.Fatalf("first fit: %+v", first)
	}
	gate := make(chan struct{})
	h.mu.Lock()
	h.gate = gate
	h.mu.Unlock()
	f.clock.Step(DefaultPredictionRefresh)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	got, err := f.ctrl.models.get(ctx, p) // the refit is due and held up at the gate
	if err != nil || got.at != first.at {
		t.Fatalf("a round with a refit due got %+v, %v; want the held model of %s at once", got, err, first.at)
	}
	close(gate)
	if got := waitForFit(t, f.ctrl.models, p, first.at.Add(DefaultPredictionRefresh)); got.model == nil {
		t.Fatalf("the background refit: %+v", got)
	}
	h.mu.Lock()
	h.gate = make(chan struct{})
	h.mu.Unlock()
	f.clock.Step(time.Duration(2+maxStaleFits) * DefaultPredictionRefresh) // the held model is too old to answer
	if got, err := f.ctrl.models.get(t.Context(), p); !errors.Is(err, errForecastNotReady) {
		t.Errorf("past %d refreshes with the refit held up: got %+v, %v; want no forecast, not ready, at once", 1+maxStaleFits, got, err)
	}
	h.mu.Lock()
	close(h.gate)
	h.mu.Unlock()
}

func TestTheObservedLeadIsThe90thPercentileStartupPlusOneSyncPeriod(t *testing.T) {
	tests := []struct {
		name     string
		startups []time.Duration
		// pending is how long each pod waited from its creation to its start (scheduling).
		pending time.Duration
		want    time.Duration
	}{
		{name: "no pod shows a start-up: the default minute", want: time.Minute + DefaultSyncPeriod},
		{name: "ten pods: the ninth slowest", startups: []time.Duration{1, 2, 3, 4, 5, 6, 7, 8, 90, 100}, want: 90*time.Second + DefaultSyncPeriod},
		{name: "a start-up up to the spec's maximum counts, bounded by it", startups: []time.Duration{3590}, want: time.Hour},
		{name: "a pod Ready more than an hour after its creation flapped since it started: it shows no start-up",
			startups: []time.Duration{20, 7200, 172800}, want: 20*time.Second + DefaultSyncPeriod},
		{name: "the start-up counts from the pod's creation: time waiting for a node counts", startups: []time.Duration{30}, pending: 45 * time.Second,
			want: 75*time.Second + DefaultSyncPeriod},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pods := podCacheOf(tt.startups)
			for _, p := range pods {
				p.CreationTimestamp = metav1.NewTime(p.StartTime.Add(-tt.pending))
			}
			if got := observedLead(pods, DefaultSyncPeriod); got != tt.want {
				t.Errorf("lead = %s, want %s", got, tt.want)
			}
		})
	}
}

func describe(pa *podpilotv1alpha1.PodAutoscaler) string {
	var b strings.Builder
	for _, c := range pa.Status.Conditions {
		b.WriteString(c.Type + "=" + string(c.Status) + " " + c.Reason + ": " + c.Message + "; ")
	}
	return b.String()
}

// podCacheOf returns ready pods that took the given seconds from start to Ready.
func podCacheOf(seconds []time.Duration) []*podcache.Pod {
	var out []*podcache.Pod
	for _, s := range seconds {
		start := now.Add(-time.Hour)
		out = append(out, &podcache.Pod{Ready: true, StartTime: metav1.NewTime(start), ReadyTransition: metav1.NewTime(start.Add(s * time.Second))})
	}
	return out
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
