package promtext

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const exposition = `# TYPE apiserver_request_total counter
apiserver_request_total{verb="PUT",resource="podautoscalers",subresource="status",code="200"} 7
apiserver_request_total{verb="PUT",resource="deployments",subresource="scale",code="200"} 2
apiserver_request_total{verb="GET",resource="deployments",subresource="scale",code="200"} 5
apiserver_request_total{verb="PUT",resource="podautoscalers",subresource="status",code="409"} 1
# TYPE podpilot_prometheus_client_request_duration_seconds histogram
podpilot_prometheus_client_request_duration_seconds_bucket{operation="query",outcome="success",le="+Inf"} 3
podpilot_prometheus_client_request_duration_seconds_sum{operation="query",outcome="success"} 0.3
podpilot_prometheus_client_request_duration_seconds_count{operation="query",outcome="success"} 3
podpilot_prometheus_client_request_duration_seconds_bucket{operation="series",outcome="success",le="+Inf"} 2
podpilot_prometheus_client_request_duration_seconds_sum{operation="series",outcome="success"} 0.1
podpilot_prometheus_client_request_duration_seconds_count{operation="series",outcome="success"} 2
`

func TestSumAddsTheMatchingSamples(t *testing.T) {
	f, err := Parse([]byte(exposition))
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Sum("apiserver_request_total", map[string]string{"verb": "PUT"}); got != 10 {
		t.Errorf("Sum of PUTs = %v, want 10", got)
	}
	if got := f.Sum("podpilot_prometheus_client_request_duration_seconds", map[string]string{"operation": "query"}); got != 3 {
		t.Errorf("histogram Sum counts samples: got %v, want 3", got)
	}
	if got := f.Sum("no_such_metric", nil); got != 0 {
		t.Errorf("Sum of a missing family = %v, want 0", got)
	}
}

func TestSumByGroupsOnLabelValues(t *testing.T) {
	f, err := Parse([]byte(exposition))
	if err != nil {
		t.Fatal(err)
	}
	got := f.SumBy("apiserver_request_total", map[string]string{"verb": "PUT"}, "resource", "subresource")
	want := map[string]float64{"podautoscalers/status": 8, "deployments/scale": 2}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("SumBy (-want +got):\n%s", diff)
	}
}

func TestHistogramSumReturnsSumAndCount(t *testing.T) {
	f, err := Parse([]byte(exposition))
	if err != nil {
		t.Fatal(err)
	}
	sum, count := f.HistogramSum("podpilot_prometheus_client_request_duration_seconds", nil)
	if count != 5 || sum < 0.399 || sum > 0.401 {
		t.Errorf("HistogramSum = %v, %v; want 0.4, 5", sum, count)
	}
}

func TestHistogramMaxBoundIsTheLowestBucketHoldingEveryNewObservation(t *testing.T) {
	const before = `# TYPE round_seconds histogram
round_seconds_bucket{le="1"} 3
round_seconds_bucket{le="2"} 4
round_seconds_bucket{le="+Inf"} 4
round_seconds_sum 3
round_seconds_count 4
`
	for _, c := range []struct {
		name, now string
		want      float64
	}{
		{"nothing new", before, 0},
		{"new ones below 1", `# TYPE round_seconds histogram
round_seconds_bucket{le="1"} 5
round_seconds_bucket{le="2"} 6
round_seconds_bucket{le="+Inf"} 6
round_seconds_sum 4
round_seconds_count 6
`, 1},
		{"largest new one in the second bucket", `# TYPE round_seconds histogram
round_seconds_bucket{le="1"} 4
round_seconds_bucket{le="2"} 6
round_seconds_bucket{le="+Inf"} 6
round_seconds_sum 6
round_seconds_count 6
`, 2},
		{"largest new one past the last bound", `# TYPE round_seconds histogram
round_seconds_bucket{le="1"} 3
round_seconds_bucket{le="2"} 4
round_seconds_bucket{le="+Inf"} 5
round_seconds_sum 9
round_seconds_count 5
`, math.Inf(1)},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, err := Parse([]byte(before))
			if err != nil {
				t.Fatal(err)
			}
			n, err := Parse([]byte(c.now))
			if err != nil {
				t.Fatal(err)
			}
			if got := n.HistogramMaxBound(b, "round_seconds", nil); got != c.want {
				t.Errorf("HistogramMaxBound = %v, want %v", got, c.want)
			}
		})
	}
}

func TestHistogramQuantileBoundIsTheLowestBucketReachingTheQuantileOfTheNewObservations(t *testing.T) {
	const before = `# TYPE wait_seconds histogram
wait_seconds_bucket{le="0.01"} 10
wait_seconds_bucket{le="0.1"} 10
wait_seconds_bucket{le="1"} 10
wait_seconds_bucket{le="+Inf"} 10
wait_seconds_sum 0.05
wait_seconds_count 10
`
	// 100 new observations: 98 under 10 ms, one under 100 ms, one under 1 s.
	const now = `# TYPE wait_seconds histogram
wait_seconds_bucket{le="0.01"} 108
wait_seconds_bucket{le="0.1"} 109
wait_seconds_bucket{le="1"} 110
wait_seconds_bucket{le="+Inf"} 110
wait_seconds_sum 1.5
wait_seconds_count 110
`
	b, err := Parse([]byte(before))
	if err != nil {
		t.Fatal(err)
	}
	n, err := Parse([]byte(now))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		q    float64
		want float64
	}{{0.5, 0.01}, {0.98, 0.01}, {0.99, 0.1}, {1, 1}} {
		if got := n.HistogramQuantileBound(b, "wait_seconds", nil, c.q); got != c.want {
			t.Errorf("q=%v: bound %v, want %v", c.q, got, c.want)
		}
	}
}
