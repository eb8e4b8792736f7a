package metrics

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/metrics/pkg/apis/custom_metrics"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"

	"github.com/podpilot/podpilot/pkg/autoscaler/replicas"
)

// ErrNoObjectValue means the custom metrics source had no value of the metric for the described object.
var ErrNoObjectValue = errors.New("no value of the metric for the object")

// objectKey identifies one batched call for a custom metric of the objects of one kind.
type objectKey struct {
	namespace, group, kind, metric, selector string
}

// ObjectMetric returns the value, in milli-units, of custom metric for the object of kind
// (group and kind, as in an autoscaling/v2 describedObject) named name in namespace, narrowed by
// metricSelector (nil means every series). It asks the custom source once for the metric of every
// object of that kind in the namespace (as GetMetricBySelector with an empty selector; the
// resource is given as the lower-case kind, its singular name, which the provider's REST mapper
// resolves), so the calls grow with the distinct namespaces, kinds and metrics, not with the
// objects or autoscalers. A Namespace is read as the root-scoped object named namespace, as
// upstream's metrics client does.
func (f *Fetcher) ObjectMetric(ctx context.Context, namespace string, kind schema.GroupKind, name, metric string, metricSelector labels.Selector) (int64, error) {
	if metricSelector == nil {
		metricSelector = labels.Everything()
	}
	what := fmt.Sprintf("custom metric %s (metric selector %q) for %s %s in namespace %s", metric, selectorText(metricSelector.String()), kind.String(), name, namespace)
	if f.custom == nil {
		return 0, fmt.Errorf("get %s: %w", what, ErrNoSource)
	}
	info, ns := objectInfo(namespace, kind, metric)
	key := objectKey{namespace: ns, group: kind.Group, kind: kind.Kind, metric: metric, selector: metricSelector.String()}
	if !info.Namespaced {
		name = namespace
	}
	f.counter.Requested(SourceObject)
	values, err := f.objects.get(ctx, key, func(ctx context.Context) (map[string]objectValue, error) {
		f.counter.Called(SourceObject)
		list, err := f.custom.GetMetricBySelector(ctx, key.namespace, labels.Everything(), info, metricSelector)
		if err != nil {
			return nil, err
		}
		return objectValues(list), nil
	})
	if err != nil {
		return 0, fmt.Errorf("get %s: %w", what, err)
	}
	v, ok := values[name]
	if !ok {
		return 0, fmt.Errorf("get %s: %w", what, ErrNoObjectValue)
	}
	if v.err != nil {
		return 0, fmt.Errorf("get %s: %w", what, v.err)
	}
	return v.milli, nil
}

// objectInfo is what the custom source is asked for the metric of the objects of kind in
// namespace, and the namespace it is asked in: the resource is given as the lower-case kind, its
// singular name, which the provider's REST mapper resolves; a Namespace is the root-scoped object
// named namespace, asked in no namespace.
func objectInfo(namespace string, kind schema.GroupKind, metric string) (provider.CustomMetricInfo, string) {
	info := provider.CustomMetricInfo{
		GroupResource: schema.GroupResource{Group: kind.Group, Resource: strings.ToLower(kind.Kind)},
		Namespaced:    true,
		Metric:        metric,
	}
	if kind.Group == "" && kind.Kind == "Namespace" {
		info.Namespaced, namespace = false, ""
	}
	return info, namespace
}

// objectValue is one object's value in milli-units, or why it could not be converted.
type objectValue struct {
	milli int64
	err   error
}

// objectValues maps each object's name to its value in milli-units; an object listed twice keeps
// its first value. A value beyond int64 milli-units or below zero is kept as that object's error,
// which fails the metrics of that object, and no other.
func objectValues(list *custom_metrics.MetricValueList) map[string]objectValue {
	if list == nil {
		return map[string]objectValue{}
	}
	out := make(map[string]objectValue, len(list.Items))
	for _, v := range list.Items {
		name := v.DescribedObject.Name
		if _, dup := out[name]; dup || name == "" {
			continue
		}
		var ov objectValue
		ov.milli, ov.err = replicas.MilliOf(v.Value)
		out[name] = ov
	}
	return out
}
