package replicas

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestCalculateObject(t *testing.T) {
	tol := DefaultConfig().Tolerances
	tests := []struct {
		name string
		in   ObjectInput
		want Result
	}{{
		name: "Object Value: the ratio value/target scales the ready pods (upstream GetObjectMetricReplicas)",
		in:   ObjectInput{SpecReplicas: 2, StatusReplicas: 2, Target: Target{Type: Value, Value: 10_000}, Value: 25_000, Pods: podsWithRequests(1, 1)},
		want: Result{Replicas: 5, UsageRatio: 2.5, Value: 25_000, Ready: 2},
	}, {
		name: "Object Value: only running and ready pods count, not spec replicas",
		in:   ObjectInput{SpecReplicas: 3, StatusReplicas: 3, Target: Target{Type: Value, Value: 10_000}, Value: 20_000, Pods: unready(podsWithRequests(1, 1, 1), 2)},
		want: Result{Replicas: 4, UsageRatio: 2, Value: 20_000, Ready: 2},
	}, {
		name: "Object AverageValue: ceil(value/target) regardless of the ready pods (upstream GetObjectPerPodMetricReplicas)",
		in:   ObjectInput{SpecReplicas: 2, StatusReplicas: 2, Target: Target{Type: AverageValue, AverageValue: 1_000}, Value: 4_500, Pods: unready(podsWithRequests(1, 1), 1)},
		want: Result{Replicas: 5, UsageRatio: 4_500.0 / 2_000.0, Value: 4_500, AverageValue: 2_250},
	}, {
		name: "Object AverageValue: the ratio divides by status replicas, not spec replicas",
		in:   ObjectInput{SpecReplicas: 5, StatusReplicas: 4, Target: Target{Type: AverageValue, AverageValue: 1_000}, Value: 4_200},
		want: Result{Replicas: 4, UsageRatio: 4_200.0 / 4_000.0, Value: 4_200, AverageValue: 1_050},
	}, {
		name: "Object Value and AverageValue differ: the same value 3000 against 1000 on 2 ready pods proposes 6 as Value",
		in:   ObjectInput{SpecReplicas: 2, StatusReplicas: 2, Target: Target{Type: Value, Value: 1_000}, Value: 3_000, Pods: podsWithRequests(1, 1)},
		want: Result{Replicas: 6, UsageRatio: 3, Value: 3_000, Ready: 2},
	}, {
		name: "Object Value and AverageValue differ: the same value 3000 against 1000 on 2 pods proposes 3 as AverageValue",
		in:   ObjectInput{SpecReplicas: 2, StatusReplicas: 2, Target: Target{Type: AverageValue, AverageValue: 1_000}, Value: 3_000, Pods: podsWithRequests(1, 1)},
		want: Result{Replicas: 3, UsageRatio: 1.5, Value: 3_000, AverageValue: 1_500},
	}, {
		name: "tolerance boundary: a Value ratio of exactly 1+tolerance keeps the spec replicas",
		in:   ObjectInput{SpecReplicas: 4, StatusReplicas: 4, Target: Target{Type: Value, Value: 10_000}, Value: 11_000, Pods: podsWithRequests(1, 1, 1, 1)},
		want: Result{Replicas: 4, UsageRatio: 1.1, Value: 11_000},
	}, {
		name: "tolerance boundary: a Value ratio just above 1+tolerance scales up",
		in:   ObjectInput{SpecReplicas: 4, StatusReplicas: 4, Target: Target{Type: Value, Value: 10_000}, Value: 11_001, Pods: podsWithRequests(1, 1, 1, 1)},
		want: Result{Replicas: 5, UsageRatio: 1.1001, Value: 11_001, Ready: 4},
	}, {
		name: "tolerance boundary: a Value ratio of exactly 1-tolerance keeps the spec replicas",
		in:   ObjectInput{SpecReplicas: 4, StatusReplicas: 4, Target: Target{Type: Value, Value: 10_000}, Value: 9_000, Pods: podsWithRequests(1, 1, 1, 1)},
		want: Result{Replicas: 4, UsageRatio: 0.9, Value: 9_000},
	}, {
		name: "tolerance boundary: a Value ratio just below 1-tolerance scales down",
		in:   ObjectInput{SpecReplicas: 10, StatusReplicas: 10, Target: Target{Type: Value, Value: 10_000}, Value: 8_999, Pods: podsWithRequests(1, 1, 1, 1, 1, 1, 1, 1, 1, 1)},
		want: Result{Replicas: 9, UsageRatio: 0.8999, Value: 8_999, Ready: 10},
	}, {
		name: "tolerance boundary: an AverageValue ratio of exactly 1+tolerance keeps the status replicas",
		in:   ObjectInput{SpecReplicas: 4, StatusReplicas: 4, Target: Target{Type: AverageValue, AverageValue: 1_000}, Value: 4_400},
		want: Result{Replicas: 4, UsageRatio: 1.1, Value: 4_400, AverageValue: 1_100},
	}, {
		name: "tolerance boundary: an AverageValue ratio just above 1+tolerance scales up",
		in:   ObjectInput{SpecReplicas: 4, StatusReplicas: 4, Target: Target{Type: AverageValue, AverageValue: 1_000}, Value: 4_401},
		want: Result{Replicas: 5, UsageRatio: 4_401.0 / 4_000.0, Value: 4_401, AverageValue: 1_101},
	}, {
		name: "a Value target at 0 spec replicas proposes ceil(value/target), as upstream's getUsageRatioReplicaCount",
		in:   ObjectInput{Target: Target{Type: Value, Value: 1_000}, Value: 2_500},
		want: Result{Replicas: 3, UsageRatio: 2.5, Value: 2_500},
	}, {
		name: "a zero value at 0 spec replicas proposes 0",
		in:   ObjectInput{Target: Target{Type: Value, Value: 1_000}},
		want: Result{},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.in.Tolerances = tol
			got, err := CalculateObject(tc.in)
			if err != nil {
				t.Fatalf("CalculateObject() error = %v", err)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("CalculateObject() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCalculateObjectErrors(t *testing.T) {
	tests := []struct {
		name string
		in   ObjectInput
		want error
	}{
		{name: "a Utilization target is ErrInvalidTarget", in: ObjectInput{SpecReplicas: 1, Target: cpuUtilization(50), Value: 5}, want: ErrInvalidTarget},
		{name: "a zero Value target is ErrInvalidTarget", in: ObjectInput{SpecReplicas: 1, Target: Target{Type: Value}, Value: 5}, want: ErrInvalidTarget},
		{name: "a Value target outside tolerance without pods is ErrNoPods", in: ObjectInput{SpecReplicas: 1, Target: Target{Type: Value, Value: 1}, Value: 5}, want: ErrNoPods},
		{name: "a negative value is ErrNegativeValue, not a proposal of 0 (issue 21)",
			in: ObjectInput{SpecReplicas: 3, StatusReplicas: 3, Target: Target{Type: AverageValue, AverageValue: 1_000}, Value: -5_000}, want: ErrNegativeValue},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := CalculateObject(tc.in); !errors.Is(err, tc.want) {
				t.Errorf("CalculateObject() error = %v, want %v", err, tc.want)
			}
		})
	}
}
