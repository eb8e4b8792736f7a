package replay

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/forecast"
	"github.com/podpilot/podpilot/pkg/replay/tracegen"
)

// predictiveSpec is qpsSpec at 2000 per pod, 1 to 40 replicas, with prediction ScaleOut and the
// given schedules.
func predictiveSpec(t *testing.T, schedules ...podpilotv1alpha1.ScheduleWindow) Spec {
	t.Helper()
	pa := &podpilotv1alpha1.PodAutoscaler{Spec: podpilotv1alpha1.PodAutoscalerSpec{
		ScaleTargetKind: podpilotv1alpha1.ScaleTargetDeployment, ScaleTargetName: "vg1-vanguard",
		MinReplicas: ptr.To[int32](1), MaxReplicas: 40,
		CustomMetrics: []podpilotv1alpha1.CustomMetricSpec{{MetricName: "zdns_vanguard_qps", AverageValue: resource.MustParse("2000")}},
		Prediction:    &podpilotv1alpha1.PredictionSpec{Mode: podpilotv1alpha1.PredictionScaleOut},
		Schedules:     schedules,
	}}
	s, err := SpecOf("ppa", pa)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// morning is three days of a noiseless weekday trace, replayed from 07:30 to 09:00 on the third.
func morning(days int) tracegen.Scenario {
	start := time.Date(2026, 10, 19, 0, 0, 0, 0, time.UTC) // a Monday
	spec := tracegen.Spec{Name: "morning", Start: start, Span: time.Duration(days) * 24 * time.Hour, Step: step, Peak: 40000, Weekend: 1}
	from := start.Add(time.Duration(days-1)*24*time.Hour + 7*time.Hour + 30*time.Minute)
	return tracegen.Scenario{Name: "morning", Make: func() (tracegen.Trace, error) { return tracegen.Generate(spec), nil },
		From: from, To: from.Add(90 * time.Minute)}
}

func TestCompare(t *testing.T) {
	m := testModel(2*time.Minute, 5*time.Minute)
	c, err := CompareScenario(predictiveSpec(t), morning(3), m, DefaultPrediction(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	r, p, o := Summarize(c.Spec, c.Steps[Reactive], step, nil), Summarize(c.Spec, c.Steps[Predictive], step, nil), Summarize(c.Spec, c.Steps[Oracle], step, nil)
	t.Logf("pod-seconds short: reactive %.0f, predictive %.0f, oracle %.0f; WAPE %.3f (naive %.3f)", r.PodSecondsShort, p.PodSecondsShort, o.PodSecondsShort, c.Model.WAPE(), c.Naive.WAPE())
	if c.LeadTime != 2*time.Minute+step {
		t.Errorf("lead time = %s, want the ready delay plus one step", c.LeadTime)
	}
	if !(p.PodSecondsShort < r.PodSecondsShort/2) {
		t.Errorf("on the 08:00 ramp (faster than pod start-up) predictive is %.0f pod-seconds short, reactive %.0f: want less than half", p.PodSecondsShort, r.PodSecondsShort)
	}
	if o.PodSecondsShort > p.PodSecondsShort {
		t.Errorf("the oracle is %.0f pod-seconds short, more than predictive's %.0f", o.PodSecondsShort, p.PodSecondsShort)
	}
	if c.Model.N == 0 || c.Model.WAPE() > 0.05 {
		t.Errorf("on a noiseless repeated day the forecast's WAPE is %.3f over %d forecasts, want <= 0.05", c.Model.WAPE(), c.Model.N)
	}
	var table, chart bytes.Buffer
	if err := WriteComparisonCSV(&table, c, nil); err != nil {
		t.Fatal(err)
	}
	if err := WriteComparisonSVG(&chart, c, nil); err != nil {
		t.Fatal(err)
	}
	if head, _, _ := strings.Cut(table.String(), "\n"); head != "time,zdns_vanguard_qps_load,needed_replicas,reactive_replicas,reactive_ready,predictive_replicas,predictive_ready,oracle_replicas,oracle_ready,forecast_load" {
		t.Errorf("comparison table header: %s", head)
	}
	if n := strings.Count(table.String(), "\n"); n != len(c.Steps[Predictive])+1 {
		t.Errorf("comparison table has %d lines for %d steps", n, len(c.Steps[Predictive]))
	}
	if !strings.Contains(chart.String(), "oracle (green)") {
		t.Error("the chart's legend names the oracle")
	}
	for i := range c.Steps[Reactive] {
		if rp, pp := c.Steps[Reactive][i].Replicas, c.Steps[Predictive][i].Replicas; pp < rp && i < 10 {
			t.Errorf("step %d: predictive %d below reactive %d before their histories diverge", i, pp, rp)
		}
	}
}

func TestCompareWithTooLittleHistoryIsReactive(t *testing.T) {
	c, err := CompareScenario(predictiveSpec(t), morning(1), testModel(2*time.Minute, 5*time.Minute), DefaultPrediction(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(c.Steps[Reactive], c.Steps[Predictive], cmpopts.EquateNaNs()); diff != "" {
		t.Errorf("without a forecast the predictive run is the reactive one (-reactive +predictive):\n%s", diff)
	}
	if c.Refused[forecast.ReasonHistoryTooShort] == 0 {
		t.Errorf("refused refits = %v, want HistoryTooShort", c.Refused)
	}
}

func TestScheduleFloorInEveryRun(t *testing.T) {
	window := podpilotv1alpha1.ScheduleWindow{Name: "opening", Start: "45 7 * * *", Duration: metav1.Duration{Duration: 30 * time.Minute}, MinReplicas: 25}
	c, err := CompareScenario(predictiveSpec(t, window), morning(1), testModel(0, 5*time.Minute), DefaultPrediction(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range Variants() {
		for _, st := range c.Steps[v] {
			in := !st.Time.Before(c.Steps[v][0].Time.Add(15*time.Minute)) && st.Time.Before(c.Steps[v][0].Time.Add(45*time.Minute))
			if in && st.Replicas < 25 {
				t.Fatalf("%s at %s: %d replicas inside the window, want the floor 25", v, st.Time.Format("15:04:05"), st.Replicas)
			}
		}
	}
}

func TestDownsampleCentresEachValueOnItsTime(t *testing.T) {
	var times []time.Time
	var load []float64
	for i := range 8 {
		times = append(times, t0.Add(time.Duration(i)*step))
		load = append(load, float64(i))
	}
	got := Downsample(times, load, t0, time.Minute)
	// t0 holds the values within 30 s of it (0, 1); t0+1m those of [30 s, 90 s) (2..5); t0+2m 6, 7.
	want := []float64{0.5, 3.5, 6.5}
	if diff := cmp.Diff(want, got.Values); diff != "" {
		t.Errorf("Downsample (-want +got):\n%s", diff)
	}
	if k := known(got, t0.Add(90*time.Second)); k != 2 {
		t.Errorf("known at t0+90s = %d, want 2: a value is known half a step after its time", k)
	}
	if !math.IsNaN(Downsample(times, []float64{nan, nan, nan, nan, nan, nan, nan, nan}, t0, time.Minute).Values[0]) {
		t.Error("a step without any value is NaN")
	}
}
