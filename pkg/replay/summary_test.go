package replay

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// steps builds steps one minute apart with one metric: replayed replicas, ready pods, actual
// replicas and load.
func stepsOf(reps, ready []int32, actual, load []float64) []Step {
	var out []Step
	for i := range reps {
		out = append(out, Step{Time: t0.Add(time.Duration(i) * time.Minute), Replicas: reps[i], Ready: ready[i], Actual: actual[i],
			Load: []float64{load[i]}, PerPod: []float64{load[i] / float64(max(ready[i], 1))}})
	}
	return out
}

func TestSummary(t *testing.T) {
	tests := []struct {
		name  string
		steps []Step
		want  Summary
	}{
		{
			name:  "replica-hours integrate the replicas over the steps, replayed and actual",
			steps: stepsOf([]int32{2, 2, 4, 4}, []int32{2, 2, 4, 4}, []float64{2, 2, 2, 2}, []float64{4000, 4000, 8000, 8000}),
			want: Summary{ReplicaHours: 12.0 / 60, ActualReplicaHours: 8.0 / 60, ScaleUps: 1, PodStarts: 2, LargestUp: 2, PeakReplicas: 4, Steps: 4, Hours: 4.0 / 60,
				SelfCheck: SelfCheck{Compared: 4, MeanDistance: 1, MaxDistance: 2, WithinOne: 0.5}},
		},
		{
			name: "time above target counts the steps whose load per ready pod exceeds the target; " +
				"pod-seconds short count the pods missing to reach it",
			// 10000 on 2 ready pods: 5000 per pod, 3 pods short for one minute; then 5 ready.
			steps: stepsOf([]int32{5, 5}, []int32{2, 5}, []float64{5, 5}, []float64{10000, 10000}),
			want: Summary{ReplicaHours: 10.0 / 60, ActualReplicaHours: 10.0 / 60, AboveTarget: time.Minute, PodSecondsShort: 180, PeakReplicas: 5, Steps: 2, Hours: 2.0 / 60,
				SelfCheck: SelfCheck{Compared: 2, WithinOne: 1}},
		},
		{
			name:  "scale events count every change of the replayed replicas, the largest step per direction, the pods the scale-ups start",
			steps: stepsOf([]int32{1, 5, 6, 2, 1}, []int32{1, 1, 5, 6, 2}, []float64{nan, nan, nan, nan, nan}, []float64{0, 0, 0, 0, 0}),
			want:  Summary{ReplicaHours: 15.0 / 60, ScaleUps: 2, ScaleDowns: 2, LargestUp: 4, LargestDown: 4, PeakReplicas: 6, Steps: 5, Hours: 5.0 / 60, PodStarts: 5},
		},
		{
			name:  "steps without a known actual replica count are left out of the self-check",
			steps: stepsOf([]int32{3, 3}, []int32{3, 3}, []float64{nan, 5}, []float64{6000, 6000}),
			want: Summary{ReplicaHours: 6.0 / 60, ActualReplicaHours: 5.0 / 60, PeakReplicas: 3, Steps: 2, Hours: 2.0 / 60,
				SelfCheck: SelfCheck{Compared: 1, MeanDistance: 2, MaxDistance: 2, WithinOne: 0}},
		},
		{
			name:  "a step where some metric has no data counts as without data",
			steps: stepsOf([]int32{3, 3, 3}, []int32{3, 3, 3}, []float64{nan, nan, nan}, []float64{6000, nan, 6000}),
			want:  Summary{ReplicaHours: 9.0 / 60, PeakReplicas: 3, Steps: 3, Hours: 3.0 / 60, StepsWithoutData: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := qpsSpec(t, "2000")
			tt.want.Name = spec.Name
			got := Summarize(spec, tt.steps, time.Minute, nil)
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("summary (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSummariesSideBySideStateTheAssumptions(t *testing.T) {
	a, b := qpsSpec(t, "2000"), qpsSpec(t, "1000")
	steps := stepsOf([]int32{2, 4}, []int32{2, 2}, []float64{2, 2}, []float64{4000, 4000})
	var buf bytes.Buffer
	if err := WriteSummaries(&buf, []Summary{Summarize(a, steps, time.Minute, nil), Summarize(b, steps, time.Minute, nil)}, time.Minute); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range append([]string{"qps-2000", "qps-1000", "replica-hours (replayed)", "self-check"}, Assumptions...) {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
}

func TestTableAndChartCoverEveryStep(t *testing.T) {
	spec := qpsSpec(t, "2000")
	steps := stepsOf([]int32{2, 4, 4, 4}, []int32{2, 2, 4, 4}, []float64{2, nan, 4, 4}, []float64{4000, nan, 8000, 8000})
	var table, chart bytes.Buffer
	if err := WriteCSV(&table, spec, steps, nil); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(table.String(), "\n"); lines != 5 {
		t.Errorf("table has %d lines, want a header and 4 rows:\n%s", lines, table.String())
	}
	if !strings.Contains(table.String(), "2026-11-23T08:01:00Z,,4,2,,,,2") {
		t.Errorf("a step without data has empty cells, not NaN:\n%s", table.String())
	}
	if err := WriteSVG(&chart, spec, steps, nil); err != nil {
		t.Fatal(err)
	}
	if s := chart.String(); !strings.HasPrefix(s, "<svg") || strings.Count(s, "<polyline") < 3 || strings.Contains(s, "NaN") {
		t.Errorf("chart is not a complete SVG without NaN:\n%s", s)
	}
}

// TestTheForecastRowsAreThePredictiveRunsAndNameTheModelThatAnswered: only the predictive column
// shows the forecast; it names the steps each model answered (none without a forecast) and
// persistence's WAPE beside the model's and seasonal-naive's.
func TestTheForecastRowsAreThePredictiveRunsAndNameTheModelThatAnswered(t *testing.T) {
	c := Comparison{Spec: Spec{Name: "ppa"}, LeadTime: 2 * time.Minute, Method: "HoltWinters", Steps: map[Variant][]Step{},
		Refused: map[string]int{"NoBetterThanPersistence": 3}, Answered: map[string]int{"HoltWinters": 30, "none": 10}}
	c.Model.Add(90, 100)
	c.Persistence.Add(80, 100)
	c.Naive.Add(70, 100)
	ss := c.Summaries(step, nil)
	for i, s := range ss {
		if (s.Forecast != nil) != (Variants()[i] == Predictive) {
			t.Errorf("%s: forecast summary %+v, want one only for the predictive run", s.Name, s.Forecast)
		}
	}
	var out bytes.Buffer
	if err := WriteSummaries(&out, ss, step); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"30 HoltWinters, 10 none", "20.0% (0.50x)", "3 NoBetterThanPersistence", "30.0%"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, out.String())
		}
	}
	if row := rowOf(out.String(), "forecast WAPE at the lead time"); strings.Count(row, "-") != 2 {
		t.Errorf("forecast WAPE row %q: want - under reactive and oracle", row)
	}
}

// rowOf is the line of out that starts with label.
func rowOf(out, label string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), label) {
			return l
		}
	}
	return ""
}

// TestStepsWithoutDataAreARowAndAboveAFewPercentAWarning: the summary counts the steps without
// data, and warns, once per trace, when they exceed NoDataWarnShare.
func TestStepsWithoutDataAreARowAndAboveAFewPercentAWarning(t *testing.T) {
	tests := []struct {
		name     string
		load     []float64
		row      string
		warnings int
	}{
		{name: "every step has data: the row says 0, no warning", load: []float64{4000, 4000, 4000, 4000}, row: "0 of 4 (0.0%)"},
		{name: "one step of four without data (25%): a warning, once for two summaries of the same trace",
			load: []float64{4000, nan, 4000, 4000}, row: "1 of 4 (25.0%)", warnings: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := qpsSpec(t, "2000")
			steps := stepsOf([]int32{2, 2, 2, 2}, []int32{2, 2, 2, 2}, []float64{2, 2, 2, 2}, tt.load)
			s := Summarize(spec, steps, time.Minute, nil)
			var buf bytes.Buffer
			if err := WriteSummaries(&buf, []Summary{s, s}, time.Minute); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			if row := rowOf(out, "steps without data"); !strings.Contains(row, tt.row) {
				t.Errorf("row %q, want %q", row, tt.row)
			}
			if n := strings.Count(out, "warning:"); n != tt.warnings {
				t.Errorf("%d warnings, want %d:\n%s", n, tt.warnings, out)
			}
		})
	}
}

// TestChurnIsRescalesAndPodStartsPerHour: the summary reports the rescales (up and down) and the
// pods the scale-ups start per hour of replay, for each run.
func TestChurnIsRescalesAndPodStartsPerHour(t *testing.T) {
	spec := qpsSpec(t, "2000")
	// 60 one-minute steps: up 1 to 3, down to 2, up to 4: three rescales, four pods started in an hour.
	reps := make([]int32, 60)
	for i := range reps {
		switch {
		case i < 10:
			reps[i] = 1
		case i < 20:
			reps[i] = 3
		case i < 30:
			reps[i] = 2
		default:
			reps[i] = 4
		}
	}
	load := make([]float64, 60)
	actual := make([]float64, 60)
	s := Summarize(spec, stepsOf(reps, reps, actual, load), time.Minute, nil)
	if got := [2]float64{s.RescalesPerHour(), s.PodStartsPerHour()}; got != [2]float64{3, 4} {
		t.Errorf("rescales, pod starts per hour = %v, want [3 4]", got)
	}
	var buf bytes.Buffer
	if err := WriteSummaries(&buf, []Summary{s}, time.Minute); err != nil {
		t.Fatal(err)
	}
	if row := rowOf(buf.String(), "rescales / pod starts per hour"); !strings.Contains(row, "3.0 / 4.0") {
		t.Errorf("churn row %q, want 3.0 / 4.0", row)
	}
}
