package metricsapi

import (
	"math"
	"sort"
	"strconv"

	"github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/metrics/pkg/apis/custom_metrics"
	"k8s.io/metrics/pkg/apis/external_metrics"
)

// maxMilliValue is the largest magnitude converted through int64 milli-units (far from
// overflowing, and beyond float64's 15-16 significant digits anyway); larger values are parsed
// from their decimal form instead.
const maxMilliValue = 1e15

// quantity converts a sample value to a quantity with milli precision (what autoscalers read
// with MilliValue). ok is false for NaN and ±Inf, which are treated as no data.
func quantity(v float64) (resource.Quantity, bool) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return resource.Quantity{}, false
	}
	if math.Abs(v) < maxMilliValue {
		return *resource.NewMilliQuantity(int64(math.Round(v*1000)), resource.DecimalSI), true
	}
	q, err := resource.ParseQuantity(strconv.FormatFloat(v, 'e', -1, 64))
	if err != nil {
		return resource.Quantity{}, false
	}
	return q, true
}

// metricSelector is the metric label selector as reported in values: nil when it selects
// everything (or cannot be expressed, which the query has already rejected).
func metricSelector(sel labels.Selector) *metav1.LabelSelector {
	if sel == nil || sel.Empty() {
		return nil
	}
	ls, err := metav1.ParseToLabelSelector(sel.String())
	if err != nil {
		return nil
	}
	return ls
}

// objectValues maps query results to the objects they describe.
type objectValues struct {
	// ref is the described object without its name.
	ref custom_metrics.ObjectReference
	// metric identifies the metric in every value.
	metric custom_metrics.MetricIdentifier
	// label carries the object name in each sample.
	label model.LabelName
	// keep, when set, holds the only names to return.
	keep map[string]struct{}
}

// values returns one value per object, sorted by name, with each sample's own timestamp.
// Samples without the object label, for objects not kept, with NaN or ±Inf values, or repeating
// an object already seen are dropped.
func (o *objectValues) values(vec model.Vector) []custom_metrics.MetricValue {
	out := make([]custom_metrics.MetricValue, 0, len(vec))
	seen := make(map[string]struct{}, len(vec))
	for _, s := range vec {
		name := string(s.Metric[o.label])
		if name == "" {
			continue
		}
		if _, dup := seen[name]; dup {
			continue
		}
		if o.keep != nil {
			if _, ok := o.keep[name]; !ok {
				continue
			}
		}
		q, ok := quantity(float64(s.Value))
		if !ok {
			continue
		}
		seen[name] = struct{}{}
		ref := o.ref
		ref.Name = name
		out = append(out, custom_metrics.MetricValue{
			DescribedObject: ref,
			Metric:          o.metric,
			Timestamp:       metav1.NewTime(s.Timestamp.Time()),
			Value:           q,
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].DescribedObject.Name < out[j].DescribedObject.Name })
	return out
}

// externalValues returns one value per sample, labelled with the sample's labels (without
// __name__), with its own timestamp; NaN and ±Inf samples are dropped.
func externalValues(metric string, vec model.Vector) []external_metrics.ExternalMetricValue {
	out := make([]external_metrics.ExternalMetricValue, 0, len(vec))
	for _, s := range vec {
		q, ok := quantity(float64(s.Value))
		if !ok {
			continue
		}
		lbls := make(map[string]string, len(s.Metric))
		for k, v := range s.Metric {
			if k != model.MetricNameLabel {
				lbls[string(k)] = string(v)
			}
		}
		out = append(out, external_metrics.ExternalMetricValue{
			MetricName:   metric,
			MetricLabels: lbls,
			Timestamp:    metav1.NewTime(s.Timestamp.Time()),
			Value:        q,
		})
	}
	return out
}
