package replicas

import (
	"fmt"
	"math"
	"math/bits"

	"k8s.io/apimachinery/pkg/api/resource"
)

// The calculators compute in int64 milli-units, as upstream's replica calculator does, so that
// their results for every value upstream handles are upstream's, bit for bit. Where upstream's
// arithmetic would overflow (and read 0, or wrap to a negative number), theirs fails instead: a
// value, sum or product beyond int64 milli-units (about ±9.2e15 units), or a utilization beyond
// int32 percent, is ErrValueOutOfRange, and a negative value is ErrNegativeValue. Both fail the
// metric, which holds the replicas and never scales down.

// MilliOf converts a metric's quantity to milli-units, rounding a finer fraction up as
// Quantity.MilliValue does. A quantity beyond int64 milli-units is ErrValueOutOfRange (where
// MilliValue would return 0, or a wrapped number), and a negative one ErrNegativeValue.
func MilliOf(q resource.Quantity) (int64, error) {
	if q.Sign() < 0 {
		return 0, fmt.Errorf("%s: %w", q.String(), ErrNegativeValue)
	}
	if q.Cmp(*resource.NewMilliQuantity(math.MaxInt64, resource.DecimalSI)) > 0 {
		return 0, fmt.Errorf("%s: %w", q.String(), ErrValueOutOfRange)
	}
	return q.MilliValue(), nil
}

// MilliFromFloat converts a value to milli-units, rounded to the nearest: NaN, ±Inf and values
// beyond int64 milli-units are ErrValueOutOfRange, and a value below zero after rounding (-Inf
// included) is ErrNegativeValue.
func MilliFromFloat(v float64) (int64, error) {
	m := math.Round(v * 1000)
	switch {
	case math.IsNaN(m), m >= 1<<63:
		return 0, fmt.Errorf("%g: %w", v, ErrValueOutOfRange)
	case m < 0:
		return 0, fmt.Errorf("%g: %w", v, ErrNegativeValue)
	}
	return int64(m), nil
}

// checkedSum adds non-negative milli values; a sum beyond int64 is ErrValueOutOfRange.
type checkedSum struct {
	total int64
	err   error
}

// add adds v, which must not be negative.
func (s *checkedSum) add(v int64) {
	if s.err == nil && v > math.MaxInt64-s.total {
		s.err = fmt.Errorf("sum beyond %d milli-units: %w", int64(math.MaxInt64), ErrValueOutOfRange)
	}
	s.total += v
}

// mulDiv returns a × b / c rounded down, for non-negative a and b and a positive c, computed in
// 128 bits so that it is exact wherever upstream's int64 a*b/c does not overflow, and defined
// where it does; a result beyond int64 is ErrValueOutOfRange.
func mulDiv(a, b, c int64) (int64, error) {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi >= uint64(c) {
		return 0, fmt.Errorf("%d × %d / %d: %w", a, b, c, ErrValueOutOfRange)
	}
	q, _ := bits.Div64(hi, lo, uint64(c))
	if q > math.MaxInt64 {
		return 0, fmt.Errorf("%d × %d / %d: %w", a, b, c, ErrValueOutOfRange)
	}
	return int64(q), nil
}
