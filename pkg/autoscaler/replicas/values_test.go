package replicas

import (
	"errors"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// TestConversionsToMilliUnitsAreExactOrFail checks issue 21 §1's first finding: a value
// MilliValue reads as 0 (or wraps) is an error, and so is a negative one.
func TestConversionsToMilliUnitsAreExactOrFail(t *testing.T) {
	quantity := func(q string) func() (int64, error) {
		return func() (int64, error) { return MilliOf(resource.MustParse(q)) }
	}
	float := func(v float64) func() (int64, error) { return func() (int64, error) { return MilliFromFloat(v) } }
	tests := []struct {
		name    string
		convert func() (int64, error)
		want    int64
		wantErr error
	}{
		{name: "a whole number is its thousandfold", convert: quantity("150"), want: 150_000},
		{name: "milli-units are kept exactly", convert: quantity("1500m"), want: 1500},
		{name: "a finer fraction is rounded up, as MilliValue does", convert: quantity("1u"), want: 1},
		{name: "zero is zero", convert: quantity("0"), want: 0},
		{name: "the largest int64 milli-units converts", convert: quantity("9223372036854775807m"), want: math.MaxInt64},
		{name: "9.3e15 is out of range, where MilliValue reads 0 (issue 21)", convert: quantity("9.3e15"), wantErr: ErrValueOutOfRange},
		{name: "1e16 is out of range, where MilliValue reads 0 (issue 21)", convert: quantity("1e16"), wantErr: ErrValueOutOfRange},
		{name: "one micro-unit past the largest milli value is out of range", convert: quantity("9223372036854775.807001"), wantErr: ErrValueOutOfRange},
		{name: "1e300 is out of range", convert: quantity("1e300"), wantErr: ErrValueOutOfRange},
		{name: "a negative value is ErrNegativeValue", convert: quantity("-1m"), wantErr: ErrNegativeValue},
		{name: "a huge negative value is ErrNegativeValue, not a wrapped number", convert: quantity("-1e300"), wantErr: ErrNegativeValue},
		{name: "a float is rounded to the nearest milli-unit", convert: float(1.2345), want: 1235},
		{name: "a denormal float is 0", convert: float(math.SmallestNonzeroFloat64), want: 0},
		{name: "a tiny negative float rounds to 0", convert: float(-0.0004), want: 0},
		{name: "NaN is out of range", convert: float(math.NaN()), wantErr: ErrValueOutOfRange},
		{name: "+Inf is out of range", convert: float(math.Inf(1)), wantErr: ErrValueOutOfRange},
		{name: "-Inf is negative", convert: float(math.Inf(-1)), wantErr: ErrNegativeValue},
		{name: "a float of 1e16 is out of range", convert: float(1e16), wantErr: ErrValueOutOfRange},
		{name: "a negative float is ErrNegativeValue", convert: float(-1), wantErr: ErrNegativeValue},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.convert()
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) || got != tc.want {
				t.Errorf("got %d, %v; want %d, %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestMulDivIsExactIn128Bits(t *testing.T) {
	tests := []struct {
		name    string
		a, b, c int64
		want    int64
		wantErr error
	}{
		{name: "small products are int64's", a: 600, b: 100, c: 1000, want: 60},
		{name: "a product past int64 divides back exactly", a: 1e17, b: 100, c: 1e17, want: 100},
		{name: "a quotient past int64 is out of range", a: math.MaxInt64, b: 100, c: 3, wantErr: ErrValueOutOfRange},
		{name: "a quotient past 64 bits is out of range", a: math.MaxInt64, b: math.MaxInt64, c: 1, wantErr: ErrValueOutOfRange},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := mulDiv(tc.a, tc.b, tc.c)
			if !errors.Is(err, tc.wantErr) || got != tc.want {
				t.Errorf("mulDiv(%d, %d, %d) = %d, %v; want %d, %v", tc.a, tc.b, tc.c, got, err, tc.want, tc.wantErr)
			}
		})
	}
}

// TestLargeValuesWithinRangeComputeAsUpstreamWithoutOverflow checks that values upstream's int64
// arithmetic overflows on, but whose result is representable, are computed exactly.
func TestLargeValuesWithinRangeComputeAsUpstreamWithoutOverflow(t *testing.T) {
	tib := int64(1) << 40 * 1000 // 1 TiB in milli-bytes
	pods := podsWithRequests(100*tib, 100*tib)
	for i := range pods {
		pods[i].Requests[corev1.ResourceMemory] = 100 * tib
	}
	memory := Target{Type: Utilization, Resource: corev1.ResourceMemory, Utilization: 100}
	got, err := Calculate(Input{CurrentReplicas: 2, Target: memory, Pods: pods, Samples: samplesOf(90*tib, 90*tib), Config: DefaultConfig(), Now: now})
	if err != nil {
		t.Fatal(err)
	}
	// 180 TiB × 100 in milli-bytes is past int64; in 128 bits it is 90%.
	want := Result{Replicas: 2, UsageRatio: 0.9, AverageValue: 90 * tib, Utilization: 90, Ready: 2, Timestamp: now}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("memory utilization of 180 TiB over 200 TiB of requests (-want +got):\n%s", diff)
	}
}

func TestAnUnusedSampleThatCouldNotBeConvertedDoesNotFailTheMetric(t *testing.T) {
	pods := podsWithRequests(1, 1, 1)
	pods[2].Phase = corev1.PodPending
	samples := samplesOf(100_000, 100_000)
	samples["pod-2"] = Sample{Err: ErrValueOutOfRange, Timestamp: now}
	samples["another-workloads-pod"] = Sample{Value: -5, Timestamp: now}
	got, err := Calculate(Input{CurrentReplicas: 3, Target: averageValue(100_000), Pods: pods, Samples: samples, Config: DefaultConfig(), Now: now})
	if err != nil {
		t.Fatalf("a pending pod's and another workload's bad samples failed the metric: %v", err)
	}
	if got.Replicas != 3 || got.Ready != 2 || got.Ignored != 1 {
		t.Errorf("Calculate() = %+v, want 3 replicas from the 2 ready pods", got)
	}
}
