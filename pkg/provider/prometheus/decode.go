package prometheus

import (
	"bytes"
	"fmt"
	"math"
	"strconv"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
)

// envelope is what every Prometheus API answer carries besides its data.
type envelope struct {
	status    string
	errorType string
	err       string
	warnings  []string
	infos     []string
}

// apiError is the error an answer with status "error" (or an API error status code) stands for,
// with client_golang's defaults for a missing errorType or message. A success status code
// with a status other than "success" is a bad response: an answer that does not say it
// succeeded is not trusted.
func (e *envelope) apiError(code int) error {
	if e.status == "success" && code/100 == 2 {
		return nil
	}
	if e.status != "error" && code/100 == 2 {
		return &v1.Error{Type: v1.ErrBadResponse, Msg: fmt.Sprintf("answer with status %q, want success or error", truncate(e.status))}
	}
	typ, msg := v1.ErrorType(e.errorType), e.err
	if typ == "" {
		typ = v1.ErrClient
	}
	if msg == "" {
		msg = fmt.Sprintf("client error: %d", code)
	}
	return &v1.Error{Type: typ, Msg: msg}
}

// decodeEnvelope reads a whole answer, handing the value of "data" to data. A key given twice
// counts with its last value, as encoding/json decodes it: data must then start over.
func decodeEnvelope(s *scanner, data func() error) (envelope, error) {
	var env envelope
	strField := func(dst *string) error {
		*dst = ""
		if c, ok := s.peek(); ok && c == 'n' {
			return s.literal()
		}
		v, err := s.str()
		*dst = string(v)
		return err
	}
	err := s.object(func(key []byte) error {
		switch string(key) {
		case "status":
			return strField(&env.status)
		case "errorType":
			return strField(&env.errorType)
		case "error":
			return strField(&env.err)
		case "warnings":
			return stringArray(s, &env.warnings)
		case "infos":
			return stringArray(s, &env.infos)
		case "data":
			return data()
		}
		return s.skip()
	})
	if err == nil {
		err = s.finish()
	}
	return env, err
}

// stringArray reads null or an array of strings into dst, replacing what it held.
func stringArray(s *scanner, dst *[]string) error {
	*dst = nil
	if c, ok := s.peek(); ok && c == 'n' {
		return s.literal()
	}
	return s.array(func() error {
		v, err := s.str()
		*dst = append(*dst, string(v))
		return err
	})
}

// isNull consumes a null if one comes next.
func (s *scanner) isNull() (bool, error) {
	if c, ok := s.peek(); ok && c == 'n' {
		return true, s.literal()
	}
	return false, nil
}

// sampleSink receives the samples of an instant-query answer: begin, then label for each label
// of the sample's metric, then end with its value, if it had one (a native histogram has none).
// reset drops every sample received so far (a result given twice counts with its last value).
type sampleSink interface {
	begin()
	label(name, value []byte)
	end(hasValue bool, v float64, ts model.Time)
	reset()
}

// queryReader reads the data of an instant-query answer (null, or an object with a vector or
// scalar result) into sink, and then checks it: a result must be there, be a vector or a scalar
// (anything else is an ErrBadQuery) and have the shape its type says.
type queryReader struct {
	sink       sampleSink
	resultType string
	shape      string
}

// data reads the value of "data"; given twice, the last counts.
func (q *queryReader) data(s *scanner) error {
	q.sink.reset()
	q.resultType, q.shape = "", ""
	if null, err := s.isNull(); null || err != nil {
		return err
	}
	var err error
	q.resultType, q.shape, err = queryData(s, q.sink)
	return err
}

// check rejects an answer whose data is missing, of another type or of the wrong shape.
func (q *queryReader) check() error { return resultError(q.resultType, q.shape) }

// queryData reads the data of an instant-query answer into sink and returns its result type
// and the shape of its result (vector, scalar, "" for none). A result of another type (a matrix,
// a string) is read too, and fails or yields nothing; the caller rejects its type.
func queryData(s *scanner, sink sampleSink) (resultType, shape string, err error) {
	err = s.object(func(key []byte) error {
		switch string(key) {
		case "resultType":
			resultType = ""
			if null, err := s.isNull(); null || err != nil {
				return err
			}
			v, err := s.str()
			resultType = string(v)
			return err
		case "result":
			// Read whatever the type: the type may come later, or twice; the caller checks
			// the last type against the shape of the last result.
			sink.reset()
			var err error
			shape, err = queryResult(s, sink)
			return err
		}
		return s.skip()
	})
	return resultType, shape, err
}

// queryResult reads a vector (an array of objects) or a scalar (a [time, "value"] pair) and
// says which it was; an empty array is an empty vector.
func queryResult(s *scanner, sink sampleSink) (string, error) {
	if err := s.open('['); err != nil {
		return "", err
	}
	defer s.close()
	c, ok := s.peek()
	switch {
	case ok && c == ']':
		s.pos++
		return model.ValVector.String(), nil
	case ok && c == '{':
		return model.ValVector.String(), s.elements(']', func() error { return vectorSample(s, sink) })
	}
	sink.begin()
	v, ts, err := pairBody(s)
	if err != nil {
		return "", err
	}
	sink.end(true, v, ts)
	return model.ValScalar.String(), nil
}

// vectorSample reads one {"metric": {...}, "value": [time, "value"]} element. A "metric" given
// twice counts with its last labels, a "value" given twice with its last value.
func vectorSample(s *scanner, sink sampleSink) error {
	sink.begin()
	var (
		hasValue, hasMetric bool
		v                   float64
		ts                  model.Time
	)
	err := s.object(func(key []byte) error {
		switch string(key) {
		case "metric":
			if hasMetric {
				sink.begin()
			}
			hasMetric = true
			return s.object(func(name []byte) error {
				// name must outlive the read of the value: keep it in a copy when reading may
				// move the buffer.
				name = append(s.name[:0], name...)
				s.name = name
				value, err := s.str()
				if err != nil {
					return err
				}
				sink.label(name, value)
				return nil
			})
		case "value":
			var err error
			v, ts, err = samplePair(s)
			hasValue = err == nil
			return err
		}
		return s.skip()
	})
	if err != nil {
		return err
	}
	sink.end(hasValue, v, ts)
	return nil
}

// samplePair reads [time, "value"].
func samplePair(s *scanner) (float64, model.Time, error) {
	if err := s.open('['); err != nil {
		return 0, 0, err
	}
	defer s.close()
	return pairBody(s)
}

// pairBody reads the rest of a [time, "value"] pair after its '['.
func pairBody(s *scanner) (float64, model.Time, error) {
	num, err := s.number()
	if err != nil {
		return 0, 0, err
	}
	ts, err := parseTime(num)
	if err != nil {
		return 0, 0, s.fail("bad sample time: %v", err)
	}
	if err := s.expect(','); err != nil {
		return 0, 0, err
	}
	raw, err := s.str()
	if err != nil {
		return 0, 0, err
	}
	v, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		return 0, 0, s.fail("bad sample value %q", raw)
	}
	return v, ts, s.expect(']')
}

// maxTimeExponent clamps the decimal exponent of a time: far beyond the digits any input can
// hold, so that the clamped exponent decides as the real one would (out of range or 0 ms).
const maxTimeExponent = 1 << 40

// parseTime reads a JSON number of Unix seconds as milliseconds, truncated toward zero, exactly
// (without going through a float): Prometheus writes times with up to 3 decimals. A time whose
// milliseconds do not fit an int64 is an error.
func parseTime(b []byte) (model.Time, error) {
	if !validNumber(b) {
		return 0, fmt.Errorf("not a time: %q", b)
	}
	if ms, ok := plainTime(b); ok {
		return ms, nil
	}
	neg := b[0] == '-'
	mantissa := b
	if neg {
		mantissa = mantissa[1:]
	}
	exp := 0
	if e := bytes.IndexAny(mantissa, "eE"); e >= 0 {
		exp = timeExponent(mantissa[e+1:])
		mantissa = mantissa[:e]
	}
	intPart, frac, _ := bytes.Cut(mantissa, []byte{'.'})
	ms, ok := milliseconds(intPart, frac, exp)
	switch {
	case !ok:
		return 0, fmt.Errorf("time %s out of range", b)
	case neg && ms <= 1<<63:
		return model.Time(-int64(ms-1) - 1), nil // -(1<<63) too
	case ms > math.MaxInt64:
		return 0, fmt.Errorf("time %s out of range", b)
	}
	return model.Time(int64(ms)), nil
}

// milliseconds returns the digits of intPart and frac times 10^(exp - len(frac) + 3), truncated
// toward zero: seconds written with an exponent, in milliseconds. It is false when that has more
// digits than a uint64 holds safely (19).
func milliseconds(intPart, frac []byte, exp int) (uint64, bool) {
	n := len(intPart) + len(frac)
	digit := func(i int) byte {
		if i < len(intPart) {
			return intPart[i]
		}
		return frac[i-len(intPart)]
	}
	lead := 0
	for lead < n && digit(lead) == '0' {
		lead++
	}
	// The integer part of the milliseconds has point digits from the first significant one.
	point := n - lead + exp - len(frac) + 3
	if lead == n || point <= 0 {
		return 0, true
	}
	if point > 19 {
		return 0, false
	}
	var ms uint64
	for i := range point {
		d := uint64(0)
		if lead+i < n {
			d = uint64(digit(lead+i) - '0')
		}
		ms = ms*10 + d
	}
	return ms, true
}

// plainTime reads the times Prometheus writes, a valid JSON number without an exponent, with at
// most 15 integer digits and 3 decimals, without parseTime's general arithmetic.
func plainTime(b []byte) (model.Time, bool) {
	neg := b[0] == '-'
	if neg {
		b = b[1:]
	}
	if bytes.ContainsAny(b, "eE") {
		return 0, false
	}
	intPart, frac, _ := bytes.Cut(b, []byte{'.'})
	if len(intPart) > 15 || len(frac) > 3 {
		return 0, false
	}
	var ms int64
	for _, d := range intPart {
		ms = ms*10 + int64(d-'0')
	}
	for i := range 3 {
		ms *= 10
		if i < len(frac) {
			ms += int64(frac[i] - '0')
		}
	}
	if neg {
		ms = -ms
	}
	return model.Time(ms), true
}

// timeExponent reads an exponent's digits, with their sign, clamped to ±maxTimeExponent.
func timeExponent(b []byte) int {
	neg := len(b) > 0 && b[0] == '-'
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		b = b[1:]
	}
	exp := 0
	for _, d := range b {
		exp = min(exp*10+int(d-'0'), maxTimeExponent)
	}
	if neg {
		return -exp
	}
	return exp
}

// resultError rejects an answer without a result, a result of a type other than vector and
// scalar, and a result whose shape is not the one its type says.
func resultError(resultType, shape string) error {
	switch {
	case resultType == "":
		return fmt.Errorf("%w: answer without a result type", ErrBadQuery)
	case resultType != model.ValVector.String() && resultType != model.ValScalar.String():
		return fmt.Errorf("%w: result type %s, want vector or scalar", ErrBadQuery, truncate(resultType))
	case shape == "":
		return fmt.Errorf("%w: %s answer without a result", ErrBadQuery, resultType)
	case shape != resultType:
		return fmt.Errorf("%w: result type %s with a %s result", ErrBadQuery, resultType, shape)
	}
	return nil
}
