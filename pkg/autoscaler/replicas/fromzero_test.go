package replicas

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestCalculateExternalFromZero(t *testing.T) {
	tests := []struct {
		name string
		in   ExternalInput
		want Result
	}{{
		name: "from zero a value target proposes ceil(usage ratio), without pods and without tolerance",
		in:   ExternalInput{Target: Target{Type: Value, Value: 10_000}, Values: []int64{25_000}},
		want: Result{Replicas: 3, UsageRatio: 2.5, Value: 25_000},
	}, {
		name: "from zero no tolerance applies: a usage ratio of 1.05 proposes 2",
		in:   ExternalInput{Target: Target{Type: Value, Value: 10_000}, Values: []int64{10_500}},
		want: Result{Replicas: 2, UsageRatio: 1.05, Value: 10_500},
	}, {
		name: "from zero a value target with no usage proposes 0",
		in:   ExternalInput{Target: Target{Type: Value, Value: 10_000}, Values: []int64{0}},
		want: Result{Replicas: 0, UsageRatio: 0, Value: 0},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.in.Tolerances = DefaultConfig().Tolerances
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
