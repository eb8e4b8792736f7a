package stats

import (
	"fmt"
	"math"
	"slices"
)

// Summary describes a sample of values.
type Summary struct {
	N                             int
	Min, Mean, P50, P90, P99, Max float64
}

// Summarize returns the summary of values; an empty sample gives N = 0 and
// NaN everywhere else.
func Summarize(values []float64) Summary {
	if len(values) == 0 {
		nan := math.NaN()
		return Summary{Min: nan, Mean: nan, P50: nan, P90: nan, P99: nan, Max: nan}
	}
	s := slices.Clone(values)
	slices.Sort(s)
	var sum float64
	for _, v := range s {
		sum += v
	}
	return Summary{
		N: len(s), Min: s[0], Max: s[len(s)-1], Mean: sum / float64(len(s)),
		P50: Percentile(s, 50), P90: Percentile(s, 90), P99: Percentile(s, 99),
	}
}

// Percentile returns the p-th percentile (0–100) of sorted, which must be
// sorted ascending, interpolating linearly between the closest ranks. An
// empty sample gives NaN.
func Percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	if p <= 0 {
		return sorted[0]
	}
	if p >= 100 {
		return sorted[len(sorted)-1]
	}
	rank := p / 100 * float64(len(sorted)-1)
	lo := int(math.Floor(rank))
	hi := min(lo+1, len(sorted)-1)
	return sorted[lo] + (rank-float64(lo))*(sorted[hi]-sorted[lo])
}

// Ratio formats a/b as "1.23×", or "n/a" when either is not a finite number
// or b is zero.
func Ratio(a, b float64) string {
	if b == 0 || math.IsNaN(a) || math.IsNaN(b) || math.IsInf(a, 0) || math.IsInf(b, 0) {
		return "n/a"
	}
	r := a / b
	switch {
	case r >= 100:
		return fmt.Sprintf("%.0f×", r)
	case r >= 10:
		return fmt.Sprintf("%.1f×", r)
	default:
		return fmt.Sprintf("%.2f×", r)
	}
}

// Num formats v with prec decimals, or "n/a" when it is NaN.
func Num(v float64, prec int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "n/a"
	}
	return fmt.Sprintf("%.*f", prec, v)
}
