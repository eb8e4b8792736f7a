package main

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	"k8s.io/utils/ptr"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/test/e2e/framework"
)

func TestReadResources(t *testing.T) {
	type got struct {
		CPU      int32
		CPUOK    bool
		Memory   float64
		MemoryOK bool
	}
	mem := resource.MustParse("175Mi")
	resourceMetric := func(name string, util *int32, avg *resource.Quantity) podpilotv1alpha1.MetricStatus {
		return podpilotv1alpha1.MetricStatus{Type: podpilotv1alpha1.ResourceMetricSourceType, Name: name, AverageUtilization: util, AverageValue: avg}
	}
	tests := []struct {
		name    string
		metrics []podpilotv1alpha1.MetricStatus
		want    got
	}{
		{
			name: "cpu Utilization and memory come from the PodAutoscaler's Resource metrics",
			metrics: []podpilotv1alpha1.MetricStatus{
				{Type: podpilotv1alpha1.CustomMetricSourceType, Name: "zdns_vanguard_qps", AverageValue: ptr.To(resource.MustParse("1500"))},
				resourceMetric("cpu", ptr.To[int32](44), nil),
				resourceMetric("memory", nil, &mem),
			},
			want: got{CPU: 44, CPUOK: true, Memory: 175 << 20, MemoryOK: true},
		},
		{
			name:    "no Resource metrics (the kwok demo without metrics.k8s.io) leaves both unread",
			metrics: []podpilotv1alpha1.MetricStatus{{Type: podpilotv1alpha1.CustomMetricSourceType, Name: "cpu", AverageValue: &mem}},
		},
		{
			name:    "a Resource metric not read yet is not 0",
			metrics: []podpilotv1alpha1.MetricStatus{resourceMetric("cpu", nil, nil), resourceMetric("memory", nil, nil)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s sample
			pa := &podpilotv1alpha1.PodAutoscaler{Status: podpilotv1alpha1.PodAutoscalerStatus{CurrentMetrics: tt.metrics}}
			readResources(&s, pa)
			if diff := cmp.Diff(tt.want, got{s.cpuUtil, s.cpuOK, s.memory, s.memoryOK}); diff != "" {
				t.Errorf("readResources() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSetServed(t *testing.T) {
	type got struct {
		Served, Min float64
		Pods        int
		OK          bool
	}
	list := func(values ...string) metricValueList {
		var l metricValueList
		for _, v := range values {
			l.Items = append(l.Items, metricValue{Value: resource.MustParse(v)})
		}
		return l
	}
	tests := []struct {
		name string
		list metricValueList
		want got
	}{
		{name: "the average is over the pods served, and the lowest pod is kept (a pod at 0 takes no traffic)",
			list: list("2400", "1800", "0"), want: got{Served: 1400, Min: 0, Pods: 3, OK: true}},
		{name: "the lowest is the lowest wherever it is in the list", list: list("900", "450m", "1200"),
			want: got{Served: (900 + 0.45 + 1200) / 3, Min: 0.45, Pods: 3, OK: true}},
		{name: "nothing served leaves the sample unread, not 0", list: list()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s sample
			setServed(&s, tt.list)
			if diff := cmp.Diff(tt.want, got{s.served, s.servedMin, s.servedPods, s.servedOK}); diff != "" {
				t.Errorf("setServed() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadRescalesListsTheAutoscalersRescalesOldestFirst(t *testing.T) {
	start := time.Date(2026, 11, 26, 1, 0, 0, 0, time.UTC)
	event := func(name, regarding, reason, note string, at time.Duration) *eventsv1.Event {
		return &eventsv1.Event{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: demoNamespace},
			EventTime:  metav1.NewMicroTime(start.Add(at)),
			Regarding:  corev1.ObjectReference{Name: regarding}, Reason: reason, Note: note,
		}
	}
	client := fake.NewClientset(
		event("b", autoscaler, "SuccessfulRescale", "New size: 1; reason: All metrics below target", 4*time.Minute+5*time.Second),
		event("a", autoscaler, "SuccessfulRescale", "New size: 3; reason: pods metric zdns_vanguard_qps above target", 35*time.Second),
		event("c", autoscaler, "FailedGetResourceMetric", "no metrics returned", 10*time.Second),
		event("d", "another", "SuccessfulRescale", "New size: 2; reason: cpu resource utilization above target", 20*time.Second),
	)
	d := &demo{cluster: &framework.Cluster{Client: client}, namespace: demoNamespace, profileStart: start}
	got, err := d.readRescales(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"0:35 New size: 3; reason: pods metric zdns_vanguard_qps above target",
		"4:05 New size: 1; reason: All metrics below target",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("readRescales() (-want +got):\n%s", diff)
	}
}

func TestPodFootprintsIsTheBusiestPodsCPUAndTheLargestPodsMemory(t *testing.T) {
	pod := func(containers ...[2]string) metricsv1beta1.PodMetrics {
		var p metricsv1beta1.PodMetrics
		for _, c := range containers {
			p.Containers = append(p.Containers, metricsv1beta1.ContainerMetrics{Usage: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse(c[0]), corev1.ResourceMemory: resource.MustParse(c[1])}})
		}
		return p
	}
	list := metricsv1beta1.PodMetricsList{Items: []metricsv1beta1.PodMetrics{
		pod([2]string{"30m", "40Mi"}, [2]string{"12m", "8Mi"}), // a pod's containers add up: 42m, 48Mi
		pod([2]string{"5m", "50Mi"}),
	}}
	got := podFootprints(list)
	want := footprint{cpuCores: 0.042, memoryBytes: 50 << 20}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(footprint{}), cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("podFootprints() (-want +got):\n%s", diff)
	}
	if s := got.String(); s != "at most 42m cpu and 50 MiB per pod" {
		t.Errorf("String() = %q", s)
	}
}
