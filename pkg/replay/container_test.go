package replay

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/provider/rules"
)

// resourceRules are resource rules in prometheus-adapter's shape: cAdvisor's usage by pod and
// container.
func resourceRules(t *testing.T) *rules.RuleSet {
	t.Helper()
	rule := func(series string) string {
		return `    containerQuery: sum by (<<.GroupBy>>) (rate(` + series + `{container!="",<<.LabelMatchers>>}[3m]))
    nodeQuery: sum by (<<.GroupBy>>) (rate(node_cpu_seconds_total{<<.LabelMatchers>>}[3m]))
    resources:
      overrides:
        node: {resource: node}
        namespace: {resource: namespace}
        pod: {resource: pod}
    containerLabel: container
`
	}
	cfg, err := rules.Load([]byte("resourceRules:\n  cpu:\n" + rule("container_cpu_usage_seconds_total") +
		"  memory:\n" + rule("container_memory_working_set_bytes") + "  window: 3m\n"))
	if err != nil {
		t.Fatal(err)
	}
	set, err := rules.Compile(cfg, rules.StaticMapper(), rules.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// usage is the cpu usage of container of pod, one value at each step.
func usage(pod, container string, values ...float64) *model.SampleStream {
	return stream(model.Metric{"pod": model.LabelValue(pod), "container": model.LabelValue(container)}, values...)
}

func TestContainerResourceMetricsReadTheNamedContainer(t *testing.T) {
	cpuUsage := model.Matrix{
		usage("web-5d8f7c9b4-aaaaa", "app", 0.15), usage("web-5d8f7c9b4-bbbbb", "app", 0.15),
		usage("web-5d8f7c9b4-aaaaa", "sidecar", 1), usage("web-5d8f7c9b4-bbbbb", "sidecar", 1),
		usage("other-5d8f7c9b4-ccccc", "app", 5),
	}
	app := func(typ podpilotv1alpha1.MetricTargetType) podpilotv1alpha1.ContainerResourceMetricSpec {
		m := podpilotv1alpha1.ContainerResourceMetricSpec{ResourceName: corev1.ResourceCPU, Container: "app", TargetType: typ}
		if typ == podpilotv1alpha1.UtilizationMetricType {
			m.AverageUtilization = ptr.To[int32](60)
		} else {
			m.AverageValue = ptr.To(resource.MustParse("100m"))
		}
		return m
	}
	tests := []struct {
		name     string
		metric   podpilotv1alpha1.ContainerResourceMetricSpec
		requests Requests
		want     []int32
	}{
		{
			// app: 0.3 cores over 2 pods, 150m a pod against 100m: 3 pods. The whole pods (2.3
			// cores) would ask for 20.
			name: "an AverageValue target reads the named container's usage, summed over the workload's pods", metric: app(podpilotv1alpha1.AverageValueMetricType),
			want: []int32{3},
		},
		{
			// 150m a pod of app's 125m request is 120%, twice the 60% target: 4 pods.
			name: "a Utilization target reads the usage against the container's own request (--container-requests)", metric: app(podpilotv1alpha1.UtilizationMetricType),
			requests: Requests{Pod: map[corev1.ResourceName]int64{corev1.ResourceCPU: 2000}, Containers: map[string]map[corev1.ResourceName]int64{"app": {corev1.ResourceCPU: 125}}},
			want:     []int32{4},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pa := &podpilotv1alpha1.PodAutoscaler{Spec: podpilotv1alpha1.PodAutoscalerSpec{
				ScaleTargetKind: podpilotv1alpha1.ScaleTargetDeployment, ScaleTargetName: "web", MaxReplicas: 20,
				ContainerResourceMetrics: []podpilotv1alpha1.ContainerResourceMetricSpec{tt.metric},
			}}
			spec, err := SpecOf("container", pa)
			if err != nil {
				t.Fatal(err)
			}
			if err := CheckRequests(spec, &tt.requests); err != nil {
				t.Fatal(err)
			}
			src := &fakeSource{answers: map[string]model.Matrix{"container_cpu_usage_seconds_total": cpuUsage}}
			r := &Reader{Source: src, Rules: resourceRules(t), Namespace: "ns"}
			tr, err := r.Trace(t.Context(), spec, Window{From: t0, To: t0, Step: step})
			if err != nil {
				t.Fatal(err)
			}
			if tr.Loads[0][0] != 0.3 || tr.Actual[0] != 2 {
				t.Errorf("load %g, actual %g; want app's 0.3 cores on the 2 pods with samples", tr.Loads[0][0], tr.Actual[0])
			}
			m := testModel(0, 0)
			m.Requests = tt.requests
			reps, _ := replicasOf(Simulate(spec, tr, m))
			if diff := cmp.Diff(tt.want, reps); diff != "" {
				t.Errorf("replicas (-want +got):\n%s", diff)
			}
			if q := src.queries[0]; !strings.Contains(q, "by (pod,container)") && !strings.Contains(q, "by (pod, container)") {
				t.Errorf("query %q is not the rule's container query grouped by pod and container", q)
			}
		})
	}
}

func TestUtilizationTargetsWithoutTheirRequestAreRefused(t *testing.T) {
	tests := []struct {
		name     string
		spec     podpilotv1alpha1.PodAutoscalerSpec
		requests Requests
	}{
		{
			name: "a Resource Utilization target without --pod-requests",
			spec: podpilotv1alpha1.PodAutoscalerSpec{ResourceMetrics: []podpilotv1alpha1.ResourceMetricSpec{{ResourceName: corev1.ResourceCPU,
				TargetType: podpilotv1alpha1.UtilizationMetricType, AverageUtilization: ptr.To[int32](50)}}},
		},
		{
			name: "a ContainerResource Utilization target with the pod's request but not its container's (--container-requests)",
			spec: podpilotv1alpha1.PodAutoscalerSpec{ContainerResourceMetrics: []podpilotv1alpha1.ContainerResourceMetricSpec{{ResourceName: corev1.ResourceCPU,
				Container: "app", TargetType: podpilotv1alpha1.UtilizationMetricType, AverageUtilization: ptr.To[int32](50)}}},
			requests: Requests{Pod: map[corev1.ResourceName]int64{corev1.ResourceCPU: 500}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pa := &podpilotv1alpha1.PodAutoscaler{Spec: tt.spec}
			pa.Spec.ScaleTargetKind, pa.Spec.ScaleTargetName, pa.Spec.MaxReplicas = podpilotv1alpha1.ScaleTargetDeployment, "web", 10
			spec, err := SpecOf("utilization", pa)
			if err != nil {
				t.Fatal(err)
			}
			if err := CheckRequests(spec, &tt.requests); !errors.Is(err, ErrUnsupportedSpec) {
				t.Errorf("err = %v, want %v", err, ErrUnsupportedSpec)
			}
		})
	}
}
