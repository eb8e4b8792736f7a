package v1alpha1

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The selector bounds are written twice, as constants and as schema markers; this keeps them
// in step for every metric kind that carries a selector.
func TestCRDSelectorBoundsMatchConstants(t *testing.T) {
	schema := crdVersionSchema(t)
	for _, kind := range []string{"customMetrics", "objectMetrics", "externalMetrics"} {
		sel := at(t, schema, "spec", kind)["items"].(map[string]any)
		sel = at(t, sel, "selector")
		expr := at(t, sel, "matchExpressions")["items"].(map[string]any)
		values := at(t, expr, "values")
		tests := []struct {
			name      string
			got, want any
		}{
			{name: kind + " matchLabels holds MaxSelectorEntries", got: at(t, sel, "matchLabels")["maxProperties"], want: float64(MaxSelectorEntries)},
			{name: kind + " matchExpressions holds MaxSelectorEntries", got: at(t, sel, "matchExpressions")["maxItems"], want: float64(MaxSelectorEntries)},
			{name: kind + " a key holds MaxLabelKeyLength", got: at(t, expr, "key")["maxLength"], want: float64(MaxLabelKeyLength)},
			{name: kind + " values hold MaxSelectorValues", got: values["maxItems"], want: float64(MaxSelectorValues)},
			{name: kind + " a value holds MaxLabelValueLength", got: values["items"].(map[string]any)["maxLength"], want: float64(MaxLabelValueLength)},
		}
		for _, tc := range tests {
			if diff := cmp.Diff(tc.want, tc.got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.name, diff)
			}
		}
	}
}

func TestMetricSelectorConvertsToTheLabelSelectorWithTheSameJSON(t *testing.T) {
	tests := []struct {
		name string
		in   *metav1.LabelSelector
	}{
		{name: "nil stays nil"},
		{name: "an empty selector stays empty", in: &metav1.LabelSelector{}},
		{name: "labels and expressions survive the round trip", in: &metav1.LabelSelector{
			MatchLabels: map[string]string{"queue": "jobs"},
			MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "shard", Operator: metav1.LabelSelectorOpIn, Values: []string{"a", "b"}},
				{Key: "canary", Operator: metav1.LabelSelectorOpDoesNotExist},
			},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.in, MetricSelectorOf(tt.in).LabelSelector()); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
		})
	}
}
