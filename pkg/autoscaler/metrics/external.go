package metrics

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"
)

// ExternalMetric returns the values of the series of external metric in namespace, narrowed by
// metricSelector (nil means every series), in milli-units. One call per namespace, metric and
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
		var out []int64
		if list != nil {
			out = make([]int64, 0, len(list.Items))
			for _, v := range list.Items {
				out = append(out, v.Value.MilliValue())
			}
		}
		return out, nil
	})
	if err != nil {
		return nil, fmt.Errorf("get external metric %s (metric selector %q) in namespace %s: %w", metric, key.selector, namespace, err)
	}
	return values, nil
}
