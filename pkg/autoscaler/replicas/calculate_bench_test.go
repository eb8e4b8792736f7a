package replicas

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// BenchmarkCalculate proposes replicas for 1,000 ready pods on a pods metric (AverageValue) and
// on cpu utilization.
func BenchmarkCalculate(b *testing.B) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	const n = 1000
	pods := make([]Pod, n)
	samples := make(map[string]Sample, n)
	for i := range pods {
		name := fmt.Sprintf("web-%04d", i)
		pods[i] = Pod{
			Name: name, Phase: corev1.PodRunning, Ready: true,
			ReadyTransition: now.Add(-time.Hour), Start: now.Add(-time.Hour),
			Requests: map[corev1.ResourceName]int64{corev1.ResourceCPU: 500},
		}
		samples[name] = Sample{Value: int64(400 + i%200), Timestamp: now.Add(-15 * time.Second), Window: time.Minute}
	}
	targets := map[string]Target{
		"average-value":   {Type: AverageValue, AverageValue: 300},
		"cpu-utilization": {Type: Utilization, Resource: corev1.ResourceCPU, Utilization: 80},
	}
	for name, target := range targets {
		b.Run(name+"/pods=1000", func(b *testing.B) {
			in := Input{CurrentReplicas: n, Target: target, Pods: pods, Samples: samples, Config: DefaultConfig(), Now: now}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Calculate(in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
