package metrics

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/metrics/pkg/apis/custom_metrics"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"

	"github.com/podpilot/podpilot/pkg/autoscaler/replicas"
)

// fetchCustom asks src once for metric of every pod in namespace; the autoscalers pick their
// own pods from the result.
func fetchCustom(ctx context.Context, src CustomSource, namespace, metric string, metricSelector labels.Selector) (map[string]replicas.Sample, error) {
	info := provider.CustomMetricInfo{GroupResource: schema.GroupResource{Resource: "pods"}, Namespaced: true, Metric: metric}
	list, err := src.GetMetricBySelector(ctx, namespace, labels.Everything(), info, metricSelector)
	if err != nil {
		return nil, err
	}
	return customSamples(list), nil
}

// customSamples converts the values of pods to samples in milli-units; a pod listed twice
// keeps its first value. A value beyond int64 milli-units or below zero is kept as the sample's
// Err, which fails the metric of an autoscaler that uses the pod, and no other.
func customSamples(list *custom_metrics.MetricValueList) map[string]replicas.Sample {
	if list == nil {
		return map[string]replicas.Sample{}
	}
	out := make(map[string]replicas.Sample, len(list.Items))
	for _, v := range list.Items {
		if kind := v.DescribedObject.Kind; kind != "" && kind != "Pod" {
			continue
		}
		name := v.DescribedObject.Name
		if _, dup := out[name]; dup || name == "" {
			continue
		}
		var window time.Duration
		if v.WindowSeconds != nil {
			window = time.Duration(*v.WindowSeconds) * time.Second
		}
		s := replicas.Sample{Timestamp: v.Timestamp.Time, Window: window}
		s.Value, s.Err = replicas.MilliOf(v.Value)
		out[name] = s
	}
	return out
}
