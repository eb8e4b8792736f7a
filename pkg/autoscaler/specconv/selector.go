package specconv

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
)

// MetricSelector converts a custom metric's selector; nil selects every series.
func MetricSelector(s *podpilotv1alpha1.MetricSelector) (labels.Selector, error) {
	if s == nil {
		return labels.Everything(), nil
	}
	sel, err := metav1.LabelSelectorAsSelector(s.LabelSelector())
	if err != nil {
		return nil, fmt.Errorf("metric selector: %w", err)
	}
	return sel, nil
}
