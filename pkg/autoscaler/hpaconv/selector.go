package hpaconv

import (
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
)

// selector returns l as a PodAutoscaler's metric selector, refusing what exceeds the bounds a
// PodAutoscaler's admission puts on it (autoscaling/v2 has none) or what the label library would
// not parse.
func selector(l *metav1.LabelSelector, p *field.Path, rs *refusals) *podpilotv1alpha1.MetricSelector {
	if l == nil {
		return nil
	}
	n := len(*rs)
	if len(l.MatchLabels) > podpilotv1alpha1.MaxSelectorEntries {
		rs.add(p.Child("matchLabels"), len(l.MatchLabels), "a PodAutoscaler's selector holds at most %d matchLabels", podpilotv1alpha1.MaxSelectorEntries)
	}
	for _, k := range slices.Sorted(maps.Keys(l.MatchLabels)) {
		if v := l.MatchLabels[k]; len(k) > podpilotv1alpha1.MaxLabelKeyLength || len(v) > podpilotv1alpha1.MaxLabelValueLength {
			rs.add(p.Child("matchLabels").Key(k), nil, "label keys may have at most %d characters and values at most %d",
				podpilotv1alpha1.MaxLabelKeyLength, podpilotv1alpha1.MaxLabelValueLength)
		}
	}
	if len(l.MatchExpressions) > podpilotv1alpha1.MaxSelectorEntries {
		rs.add(p.Child("matchExpressions"), len(l.MatchExpressions), "a PodAutoscaler's selector holds at most %d matchExpressions", podpilotv1alpha1.MaxSelectorEntries)
	}
	for i, r := range l.MatchExpressions {
		checkRequirement(r, p.Child("matchExpressions").Index(i), rs)
	}
	if len(*rs) > n {
		return nil
	}
	return podpilotv1alpha1.MetricSelectorOf(l.DeepCopy())
}

func checkRequirement(r metav1.LabelSelectorRequirement, p *field.Path, rs *refusals) {
	if r.Key == "" || len(r.Key) > podpilotv1alpha1.MaxLabelKeyLength {
		rs.add(p.Child("key"), quoted(r.Key), "must have 1 to %d characters", podpilotv1alpha1.MaxLabelKeyLength)
	}
	switch r.Operator {
	case metav1.LabelSelectorOpIn, metav1.LabelSelectorOpNotIn:
		if len(r.Values) == 0 {
			rs.add(p.Child("values"), nil, "must be non-empty for operator %s", r.Operator)
		}
	case metav1.LabelSelectorOpExists, metav1.LabelSelectorOpDoesNotExist:
		if len(r.Values) > 0 {
			rs.add(p.Child("values"), nil, "must be empty for operator %s", r.Operator)
		}
	default:
		rs.add(p.Child("operator"), quoted(string(r.Operator)), "must be In, NotIn, Exists or DoesNotExist")
	}
	if len(r.Values) > podpilotv1alpha1.MaxSelectorValues {
		rs.add(p.Child("values"), len(r.Values), "a PodAutoscaler's selector holds at most %d values per expression", podpilotv1alpha1.MaxSelectorValues)
	}
	for j, v := range r.Values {
		if len(v) > podpilotv1alpha1.MaxLabelValueLength {
			rs.add(p.Child("values").Index(j), nil, "label values may have at most %d characters", podpilotv1alpha1.MaxLabelValueLength)
		}
	}
}
