package status

import (
	"math"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/replicas"
)

func TestCurrentRendersMemoryInWholeBytesWithoutOverflow(t *testing.T) {
	memory := replicas.Target{Resource: "memory"}
	tests := []struct {
		name  string
		milli int64
		t     replicas.Target
		want  string
	}{
		{name: "memory is rounded to the nearest byte", milli: 1536_499, t: memory, want: "1536"},
		{name: "half a byte rounds up", milli: 1536_500, t: memory, want: "1537"},
		{name: "memory at the largest int64 milli-units stays positive, not wrapped", milli: math.MaxInt64, t: memory, want: "9223372036854776"},
		{name: "everything else keeps its milli-units", milli: 1500, want: "1500m"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := current(tc.milli, tc.t).String(); got != tc.want {
				t.Errorf("current(%d) = %s, want %s", tc.milli, got, tc.want)
			}
		})
	}
}

func TestTargetsAreCutToTheSchemaBound(t *testing.T) {
	pa := seedAutoscaler(func(pa *podpilotv1alpha1.PodAutoscaler) {
		for range 10 {
			pa.Spec.ExternalMetrics = append(pa.Spec.ExternalMetrics, podpilotv1alpha1.ExternalMetricSpec{
				MetricName: "q", TargetType: podpilotv1alpha1.AverageValueTarget, AverageValue: ptr.To(resource.MustParse("123456789012345678m")),
			})
			pa.Spec.ObjectMetrics = append(pa.Spec.ObjectMetrics, podpilotv1alpha1.ObjectMetricSpec{
				MetricName: "q", TargetType: podpilotv1alpha1.AverageValueTarget, AverageValue: ptr.To(resource.MustParse("123456789012345678m")),
			})
			pa.Spec.ContainerResourceMetrics = append(pa.Spec.ContainerResourceMetrics, podpilotv1alpha1.ContainerResourceMetricSpec{
				ResourceName: corev1.ResourceMemory, Container: "c", TargetType: podpilotv1alpha1.AverageValueMetricType,
				AverageValue: ptr.To(resource.MustParse("123456789012345678m")),
			})
		}
	})
	got := TargetsOf(pa, nil)
	if len(got) != maxTargetsLength || !strings.HasSuffix(got, "...") {
		t.Errorf("targets of %d characters ending %q, want %d ending ...", len(got), got[len(got)-5:], maxTargetsLength)
	}
}
