package autoscalertest

import (
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
)

// The seed 000 example's namespace and name.
const (
	Namespace = "dns"
	Name      = "hpa-vg1-vanguard"
)

// Now is the fixtures' clock: a Monday, 21:00 UTC.
var Now = time.Date(2025, 6, 16, 21, 0, 0, 0, time.UTC)

// Seed is the seed 000 example: deployment vg1-vanguard, 1 to 5 replicas, qps averageValue
// 2000; mutate adapts it per case.
func Seed(mutate ...func(*podpilotv1alpha1.PodAutoscaler)) *podpilotv1alpha1.PodAutoscaler {
	pa := &podpilotv1alpha1.PodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: Name, Namespace: Namespace, Generation: 1},
		Spec: podpilotv1alpha1.PodAutoscalerSpec{
			ScaleTargetKind: podpilotv1alpha1.ScaleTargetDeployment, ScaleTargetName: "vg1-vanguard",
			MinReplicas: ptr.To[int32](1), MaxReplicas: 5,
			CustomMetrics: []podpilotv1alpha1.CustomMetricSpec{{MetricName: "zdns_vanguard_qps", AverageValue: resource.MustParse("2000")}},
		},
	}
	for _, m := range mutate {
		m(pa)
	}
	return pa
}
