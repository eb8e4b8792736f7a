package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
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
