package metrics

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/metrics/pkg/apis/custom_metrics"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"
)

// BenchmarkObjectMetricRound is one round of n autoscalers in one namespace, each with an Object
// metric on its own Service and the same metric name: the custom source is called once per round
// (calls/round), however many objects and autoscalers there are.
func BenchmarkObjectMetricRound(b *testing.B) {
	for _, n := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("services=%d", n), func(b *testing.B) {
			list := &custom_metrics.MetricValueList{}
			for i := range n {
				list.Items = append(list.Items, custom_metrics.MetricValue{
					DescribedObject: custom_metrics.ObjectReference{Kind: "Service", Name: "svc-" + strconv.Itoa(i)}, Value: resource.MustParse("25")})
			}
			var calls atomic.Int64
			src := customFunc(func(context.Context, string, labels.Selector, provider.CustomMetricInfo, labels.Selector) (*custom_metrics.MetricValueList, error) {
				calls.Add(1)
				return list, nil
			})
			f, clk := newTestFetcher(b, FetcherConfig{Custom: src})
			svc := schema.GroupKind{Kind: "Service"}
			b.ResetTimer()
			for b.Loop() {
				clk.Step(DefaultFreshness) // a new round reads anew
				for i := range n {
					if _, err := f.ObjectMetric(b.Context(), "web", svc, "svc-"+strconv.Itoa(i), "requests_in_flight", nil); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(calls.Load())/float64(b.N), "calls/round")
		})
	}
}
