package stats

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPercentileInterpolatesBetweenClosestRanks(t *testing.T) {
	tests := []struct {
		name   string
		sorted []float64
		p      float64
		want   float64
	}{
		{name: "median of an odd sample is its middle value", sorted: []float64{1, 2, 3}, p: 50, want: 2},
		{name: "median of an even sample is the mean of the middle two", sorted: []float64{1, 2, 3, 4}, p: 50, want: 2.5},
		{name: "p90 of 1..11 is 10", sorted: []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, p: 90, want: 10},
		{name: "p0 is the minimum", sorted: []float64{3, 4}, p: 0, want: 3},
		{name: "p100 is the maximum", sorted: []float64{3, 4}, p: 100, want: 4},
		{name: "a single value is every percentile", sorted: []float64{7}, p: 99, want: 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Percentile(tt.sorted, tt.p); math.Abs(got-tt.want) > 1e-9 {
				t.Errorf("Percentile(%v, %v) = %v, want %v", tt.sorted, tt.p, got, tt.want)
			}
		})
	}
}

func TestSummarizeSortsACopy(t *testing.T) {
	in := []float64{5, 1, 4, 2, 3}
	got := Summarize(in)
	want := Summary{N: 5, Min: 1, Mean: 3, P50: 3, P90: 4.6, P99: 4.96, Max: 5}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) < 1e-9 })); diff != "" {
		t.Errorf("Summarize (-want +got):\n%s", diff)
	}
	if in[0] != 5 {
		t.Errorf("Summarize reordered its input: %v", in)
	}
}

func TestSummarizeOfNothingIsNaN(t *testing.T) {
	s := Summarize(nil)
	if s.N != 0 || !math.IsNaN(s.P50) || !math.IsNaN(s.Max) {
		t.Errorf("Summarize(nil) = %+v, want N 0 and NaN values", s)
	}
}

func TestRatioFormatsOrSaysNA(t *testing.T) {
	tests := []struct {
		name string
		a, b float64
		want string
	}{
		{name: "small ratios get two decimals", a: 1, b: 3, want: "0.33×"},
		{name: "ratios from 10 get one decimal", a: 125, b: 10, want: "12.5×"},
		{name: "ratios from 100 get none", a: 1234, b: 10, want: "123×"},
		{name: "a zero baseline has no ratio", a: 1, b: 0, want: "n/a"},
		{name: "a missing value has no ratio", a: math.NaN(), b: 1, want: "n/a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Ratio(tt.a, tt.b); got != tt.want {
				t.Errorf("Ratio(%v, %v) = %q, want %q", tt.a, tt.b, got, tt.want)
			}
		})
	}
}

func TestNumSaysNAForNaN(t *testing.T) {
	if got := Num(math.NaN(), 1); got != "n/a" {
		t.Errorf("Num(NaN) = %q, want n/a", got)
	}
	if got := Num(1.25, 1); got != "1.2" {
		t.Errorf("Num(1.25, 1) = %q, want 1.2", got)
	}
}
