package replicas

import (
	"errors"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
)

func TestCalculateExternal(t *testing.T) {
	tol := DefaultConfig().Tolerances
	tests := []struct {
		name string
		in   ExternalInput
		want Result
	}{{
		name: "value target scales the ready pods by total over target",
		in:   ExternalInput{SpecReplicas: 3, StatusReplicas: 3, Target: Target{Type: Value, Value: 10_000}, Values: []int64{8_000, 7_000}, Pods: podsWithRequests(1, 1, 1)},
		want: Result{Replicas: 5, UsageRatio: 1.5, Value: 15_000, Ready: 3},
	}, {
		name: "value target within tolerance keeps spec replicas",
		in:   ExternalInput{SpecReplicas: 3, StatusReplicas: 3, Target: Target{Type: Value, Value: 10_000}, Values: []int64{10_500}, Pods: podsWithRequests(1, 1, 1)},
		want: Result{Replicas: 3, UsageRatio: 1.05, Value: 10_500},
	}, {
		name: "average value target proposes ceil(total / target)",
		in:   ExternalInput{SpecReplicas: 4, StatusReplicas: 4, Target: Target{Type: AverageValue, AverageValue: 2_000}, Values: []int64{3_000}},
		want: Result{Replicas: 2, UsageRatio: 3.0 / 8.0, Value: 3_000, AverageValue: 750},
	}, {
		name: "average value target within tolerance keeps status replicas",
		in:   ExternalInput{SpecReplicas: 4, StatusReplicas: 4, Target: Target{Type: AverageValue, AverageValue: 2_000}, Values: []int64{8_100}},
		want: Result{Replicas: 4, UsageRatio: 8_100.0 / 8_000.0, Value: 8_100, AverageValue: 2_025},
	}, {
		name: "External without selector: every series of the metric is summed",
		in:   ExternalInput{SpecReplicas: 2, StatusReplicas: 2, Target: Target{Type: AverageValue, AverageValue: 1_000}, Values: []int64{1_000, 2_000, 3_000}},
		want: Result{Replicas: 6, UsageRatio: 3, Value: 6_000, AverageValue: 3_000},
	}, {
		name: "External with a selector: only the selected series arrive and are summed",
		in:   ExternalInput{SpecReplicas: 2, StatusReplicas: 2, Target: Target{Type: AverageValue, AverageValue: 1_000}, Values: []int64{3_000}},
		want: Result{Replicas: 3, UsageRatio: 1.5, Value: 3_000, AverageValue: 1_500},
	}, {
		name: "average value target at 0 status replicas reports an average of 0, not the total, and proposes ceil(total / target)",
		in:   ExternalInput{Target: Target{Type: AverageValue, AverageValue: 2_000}, Values: []int64{5_000}},
		want: Result{Replicas: 3, Value: 5_000},
	}, {
		name: "value target at 0 spec replicas proposes ceil(total / target) without pods (upstream getUsageRatioReplicaCount)",
		in:   ExternalInput{Target: Target{Type: Value, Value: 2_000}, Values: []int64{5_000}},
		want: Result{Replicas: 3, UsageRatio: 2.5, Value: 5_000},
	}, {
		name: "a sum at the largest int64 milli-units is still computed, and the proposal saturates at max int32",
		in:   ExternalInput{SpecReplicas: 1, StatusReplicas: 1, Target: Target{Type: AverageValue, AverageValue: 1}, Values: []int64{math.MaxInt64 - 5, 5}},
		want: Result{Replicas: math.MaxInt32, UsageRatio: float64(math.MaxInt64), Value: math.MaxInt64, AverageValue: math.MaxInt64},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.in.Tolerances = tol
			got, err := CalculateExternal(tc.in)
			if err != nil {
				t.Fatalf("CalculateExternal() error = %v", err)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("CalculateExternal() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCalculateExternalErrors(t *testing.T) {
	tests := []struct {
		name string
		in   ExternalInput
		want error
	}{
		{name: "no series is ErrNoMetrics", in: ExternalInput{SpecReplicas: 1, Target: Target{Type: Value, Value: 1}}, want: ErrNoMetrics},
		{name: "a value target that must count ready pods without pods is ErrNoPods", in: ExternalInput{SpecReplicas: 1, Target: Target{Type: Value, Value: 1}, Values: []int64{5}}, want: ErrNoPods},
		{name: "a utilization target is ErrInvalidTarget", in: ExternalInput{SpecReplicas: 1, Target: cpuUtilization(50), Values: []int64{5}}, want: ErrInvalidTarget},
		{name: "an AverageValue sum beyond int64 milli-units is ErrValueOutOfRange, where upstream 1.36 caps it at MaxInt64 (issue 21, issue 29)",
			in: ExternalInput{SpecReplicas: 1, StatusReplicas: 1, Target: Target{Type: AverageValue, AverageValue: 1}, Values: []int64{math.MaxInt64, 5}}, want: ErrValueOutOfRange},
		{name: "a Value sum beyond int64 milli-units is ErrValueOutOfRange, where upstream 1.36 caps it at MaxInt64 (issue 29)",
			in: ExternalInput{SpecReplicas: 2, StatusReplicas: 2, Target: Target{Type: Value, Value: 1_000}, Values: []int64{math.MaxInt64 / 2, math.MaxInt64/2 + 2},
				Pods: []Pod{{Name: "p1", Phase: corev1.PodRunning, Ready: true}}}, want: ErrValueOutOfRange},
		{name: "a negative series is ErrNegativeValue, not a proposal of 0 (issue 21)",
			in: ExternalInput{SpecReplicas: 3, StatusReplicas: 3, Target: Target{Type: AverageValue, AverageValue: 1_000}, Values: []int64{5_000, -4_000}}, want: ErrNegativeValue},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := CalculateExternal(tc.in); !errors.Is(err, tc.want) {
				t.Errorf("CalculateExternal() error = %v, want %v", err, tc.want)
			}
		})
	}
}
