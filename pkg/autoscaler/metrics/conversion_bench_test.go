package metrics

import (
	"strconv"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/metrics/pkg/apis/custom_metrics"
)

// BenchmarkCustomSamples converts one namespace's answer of 1,000 pods to samples, each value
// through the checked conversion to milli-units: as the provider builds them (milli quantities)
// and as a rule's large values arrive (decimal exponents).
func BenchmarkCustomSamples(b *testing.B) {
	for name, value := range map[string]func(i int) resource.Quantity{
		"milli":    func(i int) resource.Quantity { return *resource.NewMilliQuantity(int64(1500+i), resource.DecimalSI) },
		"exponent": func(i int) resource.Quantity { return resource.MustParse(strconv.Itoa(1+i%9) + "e12") },
	} {
		b.Run(name+"/pods=1000", func(b *testing.B) {
			list := &custom_metrics.MetricValueList{}
			for i := range 1000 {
				list.Items = append(list.Items, custom_metrics.MetricValue{
					DescribedObject: custom_metrics.ObjectReference{Kind: "Pod", Name: "pod-" + strconv.Itoa(i)}, Value: value(i)})
			}
			b.ReportAllocs()
			for b.Loop() {
				if got := customSamples(list); len(got) != 1000 {
					b.Fatalf("%d samples", len(got))
				}
			}
		})
	}
}
