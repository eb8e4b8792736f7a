package replicas

import (
	"errors"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestMilliOfConvertsExactlyOrFails(t *testing.T) {
	tests := []struct {
		name    string
		q       string
		want    int64
		wantErr error
	}{
		{name: "a whole number is its thousandfold", q: "150", want: 150_000},
		{name: "milli-units are kept exactly", q: "1500m", want: 1500},
		{name: "a finer fraction is rounded up, as MilliValue does", q: "1u", want: 1},
		{name: "zero is zero", q: "0", want: 0},
		{name: "the largest int64 milli-units converts", q: "9223372036854775807m", want: math.MaxInt64},
		{name: "9.3e15 is out of range, where MilliValue reads 0 (issue 21)", q: "9.3e15", wantErr: ErrValueOutOfRange},
		{name: "1e16 is out of range, where MilliValue reads 0 (issue 21)", q: "1e16", wantErr: ErrValueOutOfRange},
		{name: "one micro-unit past the largest milli value is out of range", q: "9223372036854775.807001", wantErr: ErrValueOutOfRange},
		{name: "1e300 is out of range", q: "1e300", wantErr: ErrValueOutOfRange},
		{name: "a negative value is ErrNegativeValue", q: "-1m", wantErr: ErrNegativeValue},
		{name: "a huge negative value is ErrNegativeValue, not a wrapped number", q: "-1e300", wantErr: ErrNegativeValue},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := MilliOf(resource.MustParse(tc.q))
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Fatalf("MilliOf(%s) error = %v, want %v", tc.q, err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("MilliOf(%s) = %d, want %d", tc.q, got, tc.want)
			}
		})
	}
}

func TestMilliFromFloatRoundsOrFails(t *testing.T) {
	tests := []struct {
		name    string
		v       float64
		want    int64
		wantErr error
	}{
		{name: "a value is rounded to the nearest milli-unit", v: 1.2345, want: 1235},
		{name: "a denormal is 0", v: math.SmallestNonzeroFloat64, want: 0},
		{name: "a tiny negative value rounds to 0", v: -0.0004, want: 0},
		{name: "NaN is out of range", v: math.NaN(), wantErr: ErrValueOutOfRange},
		{name: "+Inf is out of range", v: math.Inf(1), wantErr: ErrValueOutOfRange},
		{name: "-Inf is negative", v: math.Inf(-1), wantErr: ErrNegativeValue},
		{name: "1e16 is out of range", v: 1e16, wantErr: ErrValueOutOfRange},
		{name: "a negative value is ErrNegativeValue", v: -1, wantErr: ErrNegativeValue},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := MilliFromFloat(tc.v)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Fatalf("MilliFromFloat(%g) error = %v, want %v", tc.v, err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("MilliFromFloat(%g) = %d, want %d", tc.v, got, tc.want)
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

// TestLargeAndNegativeValuesFailTheMetric checks issue 21 §1's findings at the calculator: a
// sum, product or utilization beyond what it computes with, and a negative value, fail the
// metric instead of proposing a wrong (often minimal) count.
func TestLargeAndNegativeValuesFailTheMetric(t *testing.T) {
	huge := int64(5e18) // 5e15 units in milli-units
	tests := []struct {
		name    string
		target  Target
		pods    []Pod
		samples map[string]Sample
		want    error
	}{{
		name:   "two pods at 5e15 sum past int64 milli-units: ErrValueOutOfRange, not an average of -4.2e18 and a proposal of 0 (issue 21)",
		target: averageValue(100_000), pods: podsWithRequests(1, 1), samples: samplesOf(huge, huge),
		want: ErrValueOutOfRange,
	}, {
		name:   "a utilization past int32 percent is ErrValueOutOfRange, not a wrapped int32 (issue 21)",
		target: cpuUtilization(50), pods: podsWithRequests(1, 1), samples: samplesOf(3e10, 3e10),
		want: ErrValueOutOfRange,
	}, {
		name:   "a requests sum past int64 is ErrValueOutOfRange",
		target: cpuUtilization(50), pods: podsWithRequests(math.MaxInt64, math.MaxInt64), samples: samplesOf(1, 1),
		want: ErrValueOutOfRange,
	}, {
		name:   "a negative custom value is ErrNegativeValue, not a proposal of 0 (issue 21)",
		target: averageValue(100_000), pods: podsWithRequests(1, 1), samples: samplesOf(200_000, -1_000),
		want: ErrNegativeValue,
	}, {
		name:   "a negative request is ErrNegativeValue",
		target: cpuUtilization(50), pods: podsWithRequests(500, -500), samples: samplesOf(100, 100),
		want: ErrNegativeValue,
	}, {
		name:   "a used sample that could not be converted fails the metric with its error",
		target: averageValue(100_000), pods: podsWithRequests(1, 1),
		samples: map[string]Sample{"pod-0": {Value: 100_000, Timestamp: now}, "pod-1": {Err: ErrValueOutOfRange, Timestamp: now}},
		want:    ErrValueOutOfRange,
	}, {
		name:   "a target beyond int64 milli-units is ErrInvalidTarget naming why",
		target: Target{Type: AverageValue, Err: ErrValueOutOfRange}, pods: podsWithRequests(1), samples: samplesOf(1),
		want: ErrValueOutOfRange,
	}, {
		name:   "a missing pod's fallback past int64 on a scale-down is ErrValueOutOfRange",
		target: cpuUtilization(1000), pods: podsWithRequests(math.MaxInt64/2, math.MaxInt64/2), samples: samplesOf(1),
		want: ErrValueOutOfRange,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Calculate(Input{CurrentReplicas: 2, Target: tc.target, Pods: tc.pods, Samples: tc.samples, Config: DefaultConfig(), Now: now})
			if !errors.Is(err, tc.want) {
				t.Errorf("Calculate() error = %v, want %v", err, tc.want)
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
