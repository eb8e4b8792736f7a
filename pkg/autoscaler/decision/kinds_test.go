package decision

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/podpilot/podpilot/pkg/autoscaler/replicas"
)

// TestComputeNewKinds checks that the Object, External and ContainerResource kinds reach their
// calculators through compute, with upstream's descriptions and failure reasons.
func TestComputeNewKinds(t *testing.T) {
	pods := seedPods(2)
	for i := range pods {
		pods[i].ContainerRequests = map[string]map[corev1.ResourceName]int64{"app": {corev1.ResourceCPU: 200}}
	}
	in := Input{SpecReplicas: 2, StatusReplicas: 2, MinReplicas: 1, MaxReplicas: 10, Pods: pods, Config: DefaultConfig(), Now: now}
	valueTarget := replicas.Target{Type: replicas.Value, Value: 10_000}
	averageTarget := replicas.Target{Type: replicas.AverageValue, AverageValue: 1_000}
	appCPU := replicas.Target{Type: replicas.Utilization, Container: "app", Utilization: 50}
	tests := []struct {
		name         string
		metric       Metric
		wantReplicas int32
		wantDesc     string
		wantErr      error
		wantReason   string
	}{{
		name:         "an Object Value metric scales the ready pods by value over target",
		metric:       Metric{Kind: ObjectMetric, Name: "requests", DescribedKind: "Service", Target: valueTarget, Values: []int64{30_000}},
		wantReplicas: 6, wantDesc: "Service metric requests",
	}, {
		name:         "an Object AverageValue metric divides by the status replicas",
		metric:       Metric{Kind: ObjectMetric, Name: "requests", DescribedKind: "Service", Target: averageTarget, Values: []int64{3_000}},
		wantReplicas: 3, wantDesc: "Service metric requests",
	}, {
		name:    "an Object metric without exactly one value fails with FailedGetObjectMetric",
		metric:  Metric{Kind: ObjectMetric, Name: "requests", DescribedKind: "Service", Target: valueTarget},
		wantErr: replicas.ErrNoMetrics, wantReason: ReasonFailedGetObjectMetric, wantDesc: "Service metric requests",
	}, {
		name:         "an External metric sums its series",
		metric:       Metric{Kind: ExternalMetric, Name: "queue_length", Target: averageTarget, Values: []int64{2_000, 2_000}},
		wantReplicas: 4, wantDesc: "external metric queue_length",
	}, {
		name:         "a ContainerResource metric reads the container's request alone",
		metric:       Metric{Kind: ContainerResourceMetric, Name: "cpu", Target: appCPU, Samples: perPod(200, 200)},
		wantReplicas: 4, wantDesc: "cpu container resource utilization (percentage of request)",
	}, {
		name:         "a ContainerResource metric counts a pod whose metrics lack the container as missing (upstream 1.36)",
		metric:       Metric{Kind: ContainerResourceMetric, Name: "cpu", Target: appCPU, Samples: perPod(200)},
		wantReplicas: 2, wantDesc: "cpu container resource utilization (percentage of request)",
	}, {
		name:    "a fetch error of an External metric fails with FailedGetExternalMetric",
		metric:  Metric{Kind: ExternalMetric, Name: "queue_length", Target: averageTarget, FetchErr: errFetch},
		wantErr: errFetch, wantReason: ReasonFailedGetExternalMetric, wantDesc: "external metric queue_length",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := in
			in.Metrics = []Metric{tc.metric}
			c := combine(in)
			s := c.statuses[0]
			if !errors.Is(s.Err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", s.Err, tc.wantErr)
			}
			got := struct {
				Replicas     int32
				Desc, Reason string
			}{s.Result.Replicas, s.Description, ""}
			if s.Err != nil {
				got.Reason = s.FailureReason
			}
			want := struct {
				Replicas     int32
				Desc, Reason string
			}{tc.wantReplicas, tc.wantDesc, tc.wantReason}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
		})
	}
}
