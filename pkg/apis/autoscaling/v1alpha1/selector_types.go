package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Bounds of a metric selector, of the order of Kubernetes' own label limits. autoscaling/v2
// has none: an HPA admits a selector of any size and fails later, at every round.
const (
	// MaxSelectorEntries bounds matchLabels and matchExpressions each.
	MaxSelectorEntries = 32
	// MaxSelectorValues bounds the values of one matchExpressions entry.
	MaxSelectorValues = 128
	// MaxLabelKeyLength is a qualified label key's: a 253-character DNS prefix, '/', 63.
	MaxLabelKeyLength = 317
	// MaxLabelValueLength is a label value's.
	MaxLabelValueLength = 63
)

// MetricSelector narrows a metric by its labels. It is metav1.LabelSelector's JSON, field for
// field, with bounds the schema enforces at admission: at most 32 matchLabels and 32
// matchExpressions, keys of at most 317 characters, values of at most 63, at most 128 values per
// expression. podpilot owns the type only to carry those bounds (the CRD schema of an imported
// type takes no markers); LabelSelector converts it.
// +structType=atomic
type MetricSelector struct {
	// MatchLabels is a map of {key,value} pairs, each equivalent to a matchExpressions entry
	// with operator In and that single value. The requirements are ANDed.
	// +kubebuilder:validation:MaxProperties=32
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(k) <= 317 && size(self[k]) <= 63)",message="label keys may have at most 317 characters (a 253-character prefix, '/', 63) and values at most 63"
	// +optional
	MatchLabels map[string]string `json:"matchLabels,omitempty"`
	// MatchExpressions is a list of label selector requirements. The requirements are ANDed.
	// +kubebuilder:validation:MaxItems=32
	// +listType=atomic
	// +optional
	MatchExpressions []MetricSelectorRequirement `json:"matchExpressions,omitempty"`
}

// MetricSelectorRequirement is metav1.LabelSelectorRequirement with bounds: a key, an operator,
// and the values the operator relates the key to.
// +kubebuilder:validation:XValidation:rule="self.operator in ['In', 'NotIn'] ? has(self.values) && size(self.values) > 0 : !has(self.values) || size(self.values) == 0",message="values must be non-empty for In and NotIn and empty for Exists and DoesNotExist",fieldPath=".values"
type MetricSelectorRequirement struct {
	// Key is the label key that the selector applies to.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	Key string `json:"key"`
	// Operator is the key's relationship to the values: In, NotIn, Exists or DoesNotExist.
	// +kubebuilder:validation:Enum=In;NotIn;Exists;DoesNotExist
	Operator metav1.LabelSelectorOperator `json:"operator"`
	// Values are the label values; non-empty for In and NotIn, empty for Exists and
	// DoesNotExist. At most 128, each at most 63 characters.
	// +kubebuilder:validation:MaxItems=128
	// +kubebuilder:validation:items:MaxLength=63
	// +listType=atomic
	// +optional
	Values []string `json:"values,omitempty"`
}

// LabelSelector returns s as a metav1.LabelSelector (nil for nil), the type the label and
// selector libraries take.
func (s *MetricSelector) LabelSelector() *metav1.LabelSelector {
	if s == nil {
		return nil
	}
	out := &metav1.LabelSelector{MatchLabels: s.MatchLabels}
	for _, r := range s.MatchExpressions {
		out.MatchExpressions = append(out.MatchExpressions, metav1.LabelSelectorRequirement{
			Key: r.Key, Operator: r.Operator, Values: r.Values,
		})
	}
	return out
}

// MetricSelectorOf returns l as a MetricSelector (nil for nil), the inverse of LabelSelector.
func MetricSelectorOf(l *metav1.LabelSelector) *MetricSelector {
	if l == nil {
		return nil
	}
	out := &MetricSelector{MatchLabels: l.MatchLabels}
	for _, r := range l.MatchExpressions {
		out.MatchExpressions = append(out.MatchExpressions, MetricSelectorRequirement{
			Key: r.Key, Operator: r.Operator, Values: r.Values,
		})
	}
	return out
}
