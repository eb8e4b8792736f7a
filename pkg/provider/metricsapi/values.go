package metricsapi

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/metrics/pkg/apis/custom_metrics"
	"k8s.io/metrics/pkg/apis/external_metrics"

	"github.com/podpilot/podpilot/pkg/provider/prometheus"
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

// objectSamples are the samples of an object query, reduced to the object name (Labels[0]): at
// most one per object, with a finite value (the first such, in answer order), sorted by name.
// They may be shared among requests and must not be modified.
type objectSamples []prometheus.Sample

// mergeObjectSamples merges the answers of the queries one request was split into, as one
// answer would have been: sorted by name, one sample per object. It copies: answers may be
// shared.
func mergeObjectSamples(answers []objectSamples) objectSamples {
	if len(answers) == 1 {
		return answers[0]
	}
	n := 0
	for _, a := range answers {
		n += len(a)
	}
	merged := make([]prometheus.Sample, 0, n)
	for _, a := range answers {
		merged = append(merged, a...)
	}
	return newObjectSamples(merged)
}

// newObjectSamples sorts and filters samples in place. Samples without the object label, with
// NaN or ±Inf values (no data), or repeating an object already seen are dropped.
func newObjectSamples(samples []prometheus.Sample) objectSamples {
	slices.SortStableFunc(samples, func(a, b prometheus.Sample) int { return strings.Compare(a.Labels[0], b.Labels[0]) })
	out := samples[:0]
	for _, s := range samples {
		name := s.Labels[0]
		if name == "" || math.IsNaN(s.Value) || math.IsInf(s.Value, 0) {
			continue
		}
		if len(out) > 0 && out[len(out)-1].Labels[0] == name {
			continue
		}
		out = append(out, s)
	}
	return out
}

// objectValues maps query results to the objects they describe.
type objectValues struct {
	// ref is the described object without its name.
	ref custom_metrics.ObjectReference
	// metric identifies the metric in every value.
	metric custom_metrics.MetricIdentifier
}

// values returns one value per object of names (sorted) that has a sample, sorted by name, with
// each sample's own timestamp.
func (o *objectValues) values(samples objectSamples, names []string) []custom_metrics.MetricValue {
	out := make([]custom_metrics.MetricValue, 0, min(len(samples), len(names)))
	i, j := 0, 0
	for i < len(samples) && j < len(names) {
		switch c := strings.Compare(samples[i].Labels[0], names[j]); {
		case c < 0:
			i++
			continue
		case c > 0:
			j++
			continue
		}
		s := samples[i]
		i, j = i+1, j+1
		q, ok := quantity(s.Value)
		if !ok {
			continue
		}
		ref := o.ref
		ref.Name = s.Labels[0]
		out = append(out, custom_metrics.MetricValue{
			DescribedObject: ref,
			Metric:          o.metric,
			Timestamp:       metav1.NewTime(s.Timestamp.Time()),
			Value:           q,
		})
	}
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
