package replay

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/podpilot/podpilot/pkg/provider/rules"
)

// fakeSource answers range queries by the first registered substring of the query.
type fakeSource struct {
	series  []model.LabelSet
	answers map[string]model.Matrix
	queries []string
}

func (f *fakeSource) QueryRange(_ context.Context, q string, _ promv1.Range, _ ...promv1.Option) (model.Value, promv1.Warnings, promv1.Infos, error) {
	f.queries = append(f.queries, q)
	for sub, m := range f.answers {
		if strings.Contains(q, sub) {
			return m, nil, nil, nil
		}
	}
	return model.Matrix{}, nil, nil, nil
}

func (f *fakeSource) Series(context.Context, []string, time.Time, time.Time, ...promv1.Option) ([]model.LabelSet, promv1.Warnings, promv1.Infos, error) {
	return f.series, nil, nil, nil
}

var _ Source = (*fakeSource)(nil)

func podSeries(pod string, values ...float64) *model.SampleStream {
	s := &model.SampleStream{Metric: model.Metric{"pod": model.LabelValue(pod)}}
	for i, v := range values {
		if !math.IsNaN(v) {
			s.Values = append(s.Values, model.SamplePair{Timestamp: model.TimeFromUnixNano(t0.Add(time.Duration(i) * step).UnixNano()), Value: model.SampleValue(v)})
		}
	}
	return s
}

func TestReaderTrace(t *testing.T) {
	set, err := rules.Compile(rules.Default(), rules.StaticMapper(), rules.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	w := Window{From: t0, To: t0.Add(2 * step), Step: step}
	qps := model.Matrix{
		podSeries("vg1-vanguard-5d8f7c9b4-aaaaa", 1000, 1500, 2000),
		podSeries("vg1-vanguard-5d8f7c9b4-bbbbb", 1000, nan, 2000),
		podSeries("other-5d8f7c9b4-ccccc", 9000, 9000, 9000),
	}
	discovered := []model.LabelSet{{"__name__": "zdns_vanguard_qps", "namespace": "ns", "pod": "vg1-vanguard-5d8f7c9b4-aaaaa"}}
	tests := []struct {
		name       string
		answers    map[string]model.Matrix
		wantLoad   []float64
		wantActual []float64
	}{
		{
			name:     "the load sums the workload's pods only, through the rule's query; without kube-state-metrics the actual replicas are the pods with samples",
			answers:  map[string]model.Matrix{"zdns_vanguard_qps": qps},
			wantLoad: []float64{2000, 1500, 4000}, wantActual: []float64{2, 1, 2},
		},
		{
			name: "kube_deployment_spec_replicas, when present, gives the actual replicas",
			answers: map[string]model.Matrix{"zdns_vanguard_qps": qps,
				"kube_deployment_spec_replicas": {&model.SampleStream{Values: podSeries("", 3, 3, 4).Values}}},
			wantLoad: []float64{2000, 1500, 4000}, wantActual: []float64{3, 3, 4},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := &fakeSource{series: discovered, answers: tt.answers}
			r := &Reader{Source: src, Rules: set, Namespace: "ns"}
			tr, err := r.Trace(t.Context(), qpsSpec(t, "2000"), w)
			if err != nil {
				t.Fatal(err)
			}
			if !equalFloats(tr.Loads[0], tt.wantLoad) || !equalFloats(tr.Actual, tt.wantActual) {
				t.Errorf("load %v, actual %v; want %v, %v", tr.Loads[0], tr.Actual, tt.wantLoad, tt.wantActual)
			}
			if q := src.queries[0]; !strings.Contains(q, `namespace="ns"`) || !strings.Contains(q, "zdns_vanguard_qps") {
				t.Errorf("query %q is not the rule's query for the namespace's pods", q)
			}
		})
	}
}

func TestReaderWithoutARuleForTheMetricFails(t *testing.T) {
	set, err := rules.Compile(rules.Default(), rules.StaticMapper(), rules.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	r := &Reader{Source: &fakeSource{}, Rules: set, Namespace: "ns"}
	_, err = r.Trace(t.Context(), qpsSpec(t, "2000"), Window{From: t0, To: t0.Add(step), Step: step})
	if !errors.Is(err, ErrNoRule) {
		t.Errorf("err = %v, want %v", err, ErrNoRule)
	}
}

func equalFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] && !(math.IsNaN(a[i]) && math.IsNaN(b[i])) {
			return false
		}
	}
	return true
}

// rangeSource answers every range query with one series per pod (and for kube-state-metrics one
// series) with a sample at each step of the range asked, and records the ranges.
type rangeSource struct {
	fakeSource
	ranges []promv1.Range
}

func (f *rangeSource) QueryRange(_ context.Context, q string, r promv1.Range, _ ...promv1.Option) (model.Value, promv1.Warnings, promv1.Infos, error) {
	f.ranges = append(f.ranges, r)
	s := &model.SampleStream{Metric: model.Metric{"pod": "vg1-vanguard-5d8f7c9b4-aaaaa"}}
	v := model.SampleValue(1000)
	if strings.Contains(q, "kube_deployment_spec_replicas") {
		s.Metric, v = model.Metric{}, 3
	}
	for t := r.Start; !t.After(r.End); t = t.Add(r.Step) {
		s.Values = append(s.Values, model.SamplePair{Timestamp: model.TimeFromUnixNano(t.UnixNano()), Value: v})
	}
	return model.Matrix{s}, nil, nil, nil
}

func TestATraceLongerThanOneRangeQueryIsReadInChunks(t *testing.T) {
	set, err := rules.Compile(rules.Default(), rules.StaticMapper(), rules.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	src := &rangeSource{fakeSource: fakeSource{series: []model.LabelSet{{"__name__": "zdns_vanguard_qps", "namespace": "ns", "pod": "vg1-vanguard-5d8f7c9b4-aaaaa"}}}}
	r := &Reader{Source: src, Rules: set, Namespace: "ns"}
	w := Window{From: t0, To: t0.Add(7 * 24 * time.Hour), Step: step} // a week at 15 s: 40321 steps
	tr, err := r.Trace(t.Context(), qpsSpec(t, "2000"), w)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(tr.Times); n != 40321 || len(tr.Loads[0]) != n || len(tr.Actual) != n {
		t.Fatalf("%d steps, %d loads, %d actual; want 40321 each", n, len(tr.Loads[0]), len(tr.Actual))
	}
	for i := range tr.Times {
		if tr.Loads[0][i] != 1000 || tr.Actual[i] != 3 {
			t.Fatalf("step %d (%s): load %g, actual %g; want every chunk's 1000 and 3", i, tr.Times[i], tr.Loads[0][i], tr.Actual[i])
		}
	}
	for _, rg := range src.ranges {
		if n := rg.End.Sub(rg.Start)/rg.Step + 1; n > maxPoints {
			t.Errorf("a range query of %d points, more than Prometheus' %d", n, maxPoints)
		}
	}
	if len(src.ranges) != 2*4 {
		t.Errorf("%d range queries, want 4 chunks for the load and 4 for the replicas", len(src.ranges))
	}
}
