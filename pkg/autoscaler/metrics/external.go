package metrics

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/metrics/pkg/apis/external_metrics"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"

	"github.com/podpilot/podpilot/pkg/autoscaler/replicas"
)

// ExternalMetric returns the values of the series of external metric in namespace, narrowed by
// metricSelector (nil means every series), in milli-units; a series beyond int64 milli-units or
// below zero fails the metric (every autoscaler sums all of them). One call per namespace, metric and
// selector within the freshness period serves every autoscaler that asks. The slice is shared with
// other callers and must not be modified.
func (f *Fetcher) ExternalMetric(ctx context.Context, namespace, metric string, metricSelector labels.Selector) ([]int64, error) {
	if metricSelector == nil {
		metricSelector = labels.Everything()
	}
	if f.external == nil {
		return nil, fmt.Errorf("get external metric %s in namespace %s: %w", metric, namespace, ErrNoSource)
	}
	key := customKey{namespace: namespace, metric: metric, selector: metricSelector.String()}
	f.counter.Requested(SourceExternal)
	values, err := f.externals.get(ctx, key, func(ctx context.Context) ([]int64, error) {
		f.counter.Called(SourceExternal)
		list, err := f.external.GetExternalMetric(ctx, namespace, metricSelector, provider.ExternalMetricInfo{Metric: metric})
		if err != nil {
			return nil, err
		}
		return externalValues(list)
	})
	if err != nil {
		return nil, fmt.Errorf("get external metric %s (metric selector %q) in namespace %s: %w", metric, selectorText(key.selector), namespace, err)
	}
	return values, nil
}

// externalValues converts the series' values to milli-units; a value beyond int64 milli-units or
// below zero is an error naming its series' labels, where upstream's MilliValue would read 0.
func externalValues(list *external_metrics.ExternalMetricValueList) ([]int64, error) {
	if list == nil {
		return nil, nil
	}
	out := make([]int64, 0, len(list.Items))
	for _, v := range list.Items {
		m, err := replicas.MilliOf(v.Value)
		if err != nil {
			return nil, fmt.Errorf("series %s: %w", labels.Set(v.MetricLabels).String(), err)
		}
		out = append(out, m)
	}
	return out, nil
}
