package prediction

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/autoscalertest"
	"github.com/podpilot/podpilot/pkg/autoscaler/decision"
	"github.com/podpilot/podpilot/pkg/podcache"
)

func TestTheObservedLeadIsThe90thPercentileStartupPlusOneSyncPeriod(t *testing.T) {
	tests := []struct {
		name     string
		startups []time.Duration
		// pending is how long each pod waited from its creation to its start (scheduling).
		pending time.Duration
		want    time.Duration
	}{
		{name: "no pod shows a start-up: the default minute", want: time.Minute + DefaultSyncPeriod},
		{name: "ten pods: the ninth slowest", startups: []time.Duration{1, 2, 3, 4, 5, 6, 7, 8, 90, 100}, want: 90*time.Second + DefaultSyncPeriod},
		{name: "a start-up up to the spec's maximum counts, bounded by it", startups: []time.Duration{3590}, want: time.Hour},
		{name: "a pod Ready more than an hour after its creation flapped since it started: it shows no start-up",
			startups: []time.Duration{20, 7200, 172800}, want: 20*time.Second + DefaultSyncPeriod},
		{name: "the start-up counts from the pod's creation: time waiting for a node counts", startups: []time.Duration{30}, pending: 45 * time.Second,
			want: 75*time.Second + DefaultSyncPeriod},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pods := podCacheOf(tt.startups)
			for _, p := range pods {
				p.CreationTimestamp = metav1.NewTime(p.StartTime.Add(-tt.pending))
			}
			if got := observedLead(pods, DefaultSyncPeriod); got != tt.want {
				t.Errorf("lead = %s, want %s", got, tt.want)
			}
		})
	}
}

// podCacheOf returns ready pods that took the given seconds from start to Ready.
func podCacheOf(seconds []time.Duration) []*podcache.Pod {
	var out []*podcache.Pod
	for _, s := range seconds {
		start := now.Add(-time.Hour)
		out = append(out, &podcache.Pod{Ready: true, StartTime: metav1.NewTime(start), ReadyTransition: metav1.NewTime(start.Add(s * time.Second))})
	}
	return out
}

func TestResourceHistoriesAreDistinctPerResourceAndContainerAndSharedAcrossPodAutoscalers(t *testing.T) {
	cpu := podpilotv1alpha1.ResourceMetricSpec{ResourceName: corev1.ResourceCPU, TargetType: podpilotv1alpha1.UtilizationMetricType, AverageUtilization: ptr.To[int32](50)}
	memory := podpilotv1alpha1.ResourceMetricSpec{ResourceName: corev1.ResourceMemory, TargetType: podpilotv1alpha1.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("1Gi"))}
	container := func(c string, r corev1.ResourceName) podpilotv1alpha1.ContainerResourceMetricSpec {
		return podpilotv1alpha1.ContainerResourceMetricSpec{ResourceName: r, Container: c, TargetType: podpilotv1alpha1.UtilizationMetricType, AverageUtilization: ptr.To[int32](50)}
	}
	a := autoscalertest.Seed(predicting(podpilotv1alpha1.PredictionScaleOut), func(pa *podpilotv1alpha1.PodAutoscaler) {
		pa.Spec.ResourceMetrics = []podpilotv1alpha1.ResourceMetricSpec{cpu, memory}
		pa.Spec.ContainerResourceMetrics = []podpilotv1alpha1.ContainerResourceMetricSpec{container("app", corev1.ResourceCPU), container("sidecar", corev1.ResourceCPU)}
	})
	// Another PodAutoscaler on the same target and metrics, with other targets.
	b := autoscalertest.Seed(predicting(podpilotv1alpha1.PredictionForecastOnly), func(pa *podpilotv1alpha1.PodAutoscaler) {
		pa.Name = "other"
		pa.Spec.ResourceMetrics = []podpilotv1alpha1.ResourceMetricSpec{cpu}
		pa.Spec.ContainerResourceMetrics = []podpilotv1alpha1.ContainerResourceMetricSpec{container("app", corev1.ResourceCPU)}
	})
	keys := map[modelKey]int{}
	var order []string
	for _, pa := range []*podpilotv1alpha1.PodAutoscaler{a, b} {
		plans := Plans(pa)
		if n := len(pa.Spec.CustomMetrics) + len(pa.Spec.ResourceMetrics) + len(pa.Spec.ContainerResourceMetrics); len(plans) != n {
			t.Fatalf("%s: %d history plans for %d metrics", pa.Name, len(plans), n)
		}
		for _, p := range plans {
			if keys[p.key]++; keys[p.key] == 1 {
				order = append(order, p.key.Metric)
			}
		}
	}
	slices.Sort(order)
	want := []string{"ContainerResource/app/cpu", "ContainerResource/sidecar/cpu", "Pods/zdns_vanguard_qps", "Resource/cpu", "Resource/memory"}
	if diff := cmp.Diff(want, order); diff != "" {
		t.Errorf("distinct histories (-want +got):\n%s", diff)
	}
	if n := keys[Plans(b)[decision.MetricID{Kind: decision.ResourceMetric, Name: "cpu"}].key]; n != 2 {
		t.Errorf("the cpu history is planned %d times over two PodAutoscalers, want 2 on one key", n)
	}
}
