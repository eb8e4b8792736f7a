package metricsapi

import (
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/podpilot/podpilot/pkg/provider/prometheus"
)

// rangeAnswer answers a range query with one series per label set, each with value v(i) at the
// i-th step from start.
func rangeAnswer(sets []model.Metric, v func(i int) float64) func(string, time.Time, time.Time, time.Duration) (model.Matrix, error) {
	return func(_ string, start, end time.Time, step time.Duration) (model.Matrix, error) {
		var m model.Matrix
		for _, ls := range sets {
			s := &model.SampleStream{Metric: ls}
			for t := start; !t.After(end); t = t.Add(step) {
				s.Values = append(s.Values, model.SamplePair{Timestamp: model.TimeFromUnixNano(t.UnixNano()), Value: model.SampleValue(v(int(t.Sub(start) / step)))})
			}
			m = append(m, s)
		}
		return m, nil
	}
}

func TestObjectsHistorySelectsOnlyTheTargetsPodsInPromQLAndSumsThemThere(t *testing.T) {
	prom := &fakeProm{series: seedSeries(), rangeQuery: rangeAnswer(
		[]model.Metric{{historyLabel: "1"}, {}}, func(i int) float64 { return float64(i) })}
	p := servingProvider(t, prom, "", seedPods()...)
	prom.queries = nil
	req := HistoryRequest{Namespace: "ns", Metric: "zdns_vanguard_qps", Resource: podsGR, Names: "web-[a-z0-9]+-[a-z0-9]+",
		Start: testNow.Add(-3 * time.Minute), End: testNow, Step: time.Minute}
	got, err := p.FreshReads().ObjectsHistory(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]float64{0, 1, 2, 3}, got); diff != "" {
		t.Errorf("history (-want +got):\n%s", diff)
	}
	want := `sum by (podpilot_history) (label_replace(sum(rate(zdns_vanguard_queries_total{namespace="ns",pod=~"web-[a-z0-9]+-[a-z0-9]+"}[1m])) by (pod), "podpilot_history", "1", "pod", "web-[a-z0-9]+-[a-z0-9]+"))`
	if len(prom.queries) != 1 || prom.queries[0] != want {
		t.Errorf("queries = %q, want [%s]", prom.queries, want)
	}
}

func TestHistoryOverMoreThanOneRangeQueryIsReadInChunksAndLeavesGapsNaN(t *testing.T) {
	var ranges [][2]time.Time
	prom := &fakeProm{series: seedSeries()}
	prom.rangeQuery = func(q string, start, end time.Time, step time.Duration) (model.Matrix, error) {
		ranges = append(ranges, [2]time.Time{start, end})
		if end.Sub(start)/step >= prometheus.MaxRangePoints {
			t.Errorf("range %s to %s has %d steps", start, end, end.Sub(start)/step)
		}
		return model.Matrix{{Values: []model.SamplePair{{Timestamp: model.TimeFromUnixNano(start.UnixNano()), Value: 1}}}}, nil
	}
	p := servingProvider(t, prom, "")
	sel, err := labels.Parse("zone=a")
	if err != nil {
		t.Fatal(err)
	}
	req := HistoryRequest{Namespace: "ns", Metric: "zdns_vanguard_qps", Selector: sel,
		Start: testNow.Add(-10 * 24 * time.Hour), End: testNow, Step: time.Minute}
	got, err := p.FreshReads().ExternalHistory(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(ranges) != 2 || !ranges[0][0].Equal(req.Start) || !ranges[1][1].Equal(req.End) || !ranges[1][0].Equal(ranges[0][1].Add(time.Minute)) {
		t.Errorf("ranges = %v, want two adjacent ones from start to end", ranges)
	}
	if len(got) != 10*24*60+1 || got[0] != 1 || !math.IsNaN(got[1]) || got[prometheus.MaxRangePoints-1] != 1 {
		t.Errorf("history of %d values, first %v, want %d with the chunks' first values and NaN elsewhere", len(got), got[:2], 10*24*60+1)
	}
}

func TestHistoryOfAnUnknownMetricIsA404WithoutAQuery(t *testing.T) {
	prom := &fakeProm{series: seedSeries()}
	p := servingProvider(t, prom, "")
	prom.queries = nil
	_, err := p.FreshReads().ObjectsHistory(t.Context(), HistoryRequest{Namespace: "ns", Metric: "nope", Resource: podsGR, Names: ".*",
		Start: testNow.Add(-time.Hour), End: testNow, Step: time.Minute})
	checkStatus(t, err, http.StatusNotFound)
	if len(prom.queries) != 0 {
		t.Errorf("queries = %q, want none", prom.queries)
	}
}
