package metricsapi

import (
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"
)

func TestLastSampleIsTheNewestRawSampleOfTheRulesSeries(t *testing.T) {
	scraped := testNow.Add(-4*time.Second - 250*time.Millisecond)
	tests := []struct {
		name   string
		info   provider.CustomMetricInfo
		answer model.Vector
		want   time.Time
		query  string
		code   int
	}{
		{
			name:   "the seed's rated counter: its raw series' newest timestamp, to the millisecond",
			info:   qpsPod,
			answer: model.Vector{sample(float64(scraped.UnixMilli())/1000, testNow)},
			want:   scraped,
			query:  `max(timestamp(zdns_vanguard_queries_total{namespace="ns",pod!=""}))`,
		},
		{
			name:  "no series in the namespace is the zero time, not an error",
			info:  qpsPod,
			query: `max(timestamp(zdns_vanguard_queries_total{namespace="ns",pod!=""}))`,
		},
		{
			name: "an unknown metric is a 404 without a query",
			info: provider.CustomMetricInfo{GroupResource: podsGR, Namespaced: true, Metric: "nope"},
			code: http.StatusNotFound,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prom := &fakeProm{series: seedSeries(), query: func(string) (model.Vector, error) { return tt.answer, nil }}
			p := servingProvider(t, prom, "", seedPods()...)
			prom.queries = nil
			got, err := p.FreshReads().LastSample(t.Context(), "ns", tt.info, nil)
			if tt.code != 0 {
				checkStatus(t, err, tt.code)
				if len(prom.queries) != 0 {
					t.Errorf("queries = %q, want none", prom.queries)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !got.Equal(tt.want) {
				t.Errorf("LastSample = %s, want %s", got, tt.want)
			}
			if len(prom.queries) != 1 || prom.queries[0] != tt.query {
				t.Errorf("queries = %q, want [%s]", prom.queries, tt.query)
			}
		})
	}
}

func TestLastExternalSampleIsTheNewestRawSampleOfTheExternalRulesSeries(t *testing.T) {
	scraped := testNow.Add(-3 * time.Second)
	qps := provider.ExternalMetricInfo{Metric: "zdns_vanguard_qps"}
	prom := &fakeProm{series: seedSeries(), query: func(string) (model.Vector, error) {
		return model.Vector{sample(float64(scraped.UnixMilli())/1000, testNow)}, nil
	}}
	p := servingProvider(t, prom, "")
	prom.queries = nil
	sel, err := labels.Parse("zone=a")
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.FreshReads().LastExternalSample(t.Context(), "ns", sel, qps)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Equal(scraped) {
		t.Errorf("LastExternalSample = %s, want %s", got, scraped)
	}
	want := `max(timestamp(zdns_vanguard_queries_total{zone="a",namespace="ns"}))`
	if len(prom.queries) != 1 || prom.queries[0] != want {
		t.Errorf("queries = %q, want [%s]", prom.queries, want)
	}
	prom.queries = nil
	_, err = p.FreshReads().LastExternalSample(t.Context(), "ns", nil, provider.ExternalMetricInfo{Metric: "nope"})
	checkStatus(t, err, http.StatusNotFound)
	if len(prom.queries) != 0 {
		t.Errorf("an unknown external metric sent queries %q", prom.queries)
	}
}
