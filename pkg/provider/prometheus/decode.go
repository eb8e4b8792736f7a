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
// with client_golang's defaults for a missing errorType or message.
func (e *envelope) apiError(code int) error {
	if e.status != "error" && code/100 == 2 {
		return nil
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

// decodeEnvelope reads a whole answer, handing the value of "data" to data.
func decodeEnvelope(s *scanner, data func() error) (envelope, error) {
	var env envelope
	strField := func(dst *string) error {
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
			if c, ok := s.peek(); ok && c == 'n' {
				return s.literal()
			}
			return data()
		}
		return s.skip()
	})
	if err == nil {
		err = s.finish()
	}
	return env, err
}

func stringArray(s *scanner, dst *[]string) error {
	if c, ok := s.peek(); ok && c == 'n' {
		return s.literal()
	}
	return s.array(func() error {
		v, err := s.str()
		*dst = append(*dst, string(v))
		return err
	})
}

// sampleSink receives the samples of an instant-query answer: begin, then label for each label
// of the sample's metric, then end with its value, if it had one (a native histogram has none).
type sampleSink interface {
	begin()
	label(name, value []byte)
	end(hasValue bool, v float64, ts model.Time)
}

// queryData reads the data of an instant-query answer into sink and returns its result type.
// Anything but a vector or a scalar is skipped; the caller rejects it by its type.
func queryData(s *scanner, sink sampleSink) (string, error) {
	var resultType string
	err := s.object(func(key []byte) error {
		switch string(key) {
		case "resultType":
			v, err := s.str()
			resultType = string(v)
			return err
		case "result":
			switch resultType {
			case "", model.ValVector.String(), model.ValScalar.String():
				return queryResult(s, sink)
			}
		}
		return s.skip()
	})
	return resultType, err
}

// queryResult reads a vector (an array of objects) or a scalar (a [time, "value"] pair).
func queryResult(s *scanner, sink sampleSink) error {
	if err := s.expect('['); err != nil {
		return err
	}
	c, ok := s.peek()
	switch {
	case ok && c == ']':
		s.pos++
		return nil
	case ok && c == '{':
		return s.elements(']', func() error { return vectorSample(s, sink) })
	}
	sink.begin()
	v, ts, err := pairBody(s)
	if err != nil {
		return err
	}
	sink.end(true, v, ts)
	return nil
}

// vectorSample reads one {"metric": {...}, "value": [time, "value"]} element.
func vectorSample(s *scanner, sink sampleSink) error {
	sink.begin()
	var (
		hasValue bool
		v        float64
		ts       model.Time
	)
	err := s.object(func(key []byte) error {
		switch string(key) {
		case "metric":
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
	if err := s.expect('['); err != nil {
		return 0, 0, err
	}
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
		return 0, 0, s.fail("bad sample time %q: %v", num, err)
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

// parseTime reads Unix seconds with up to millisecond decimals, as Prometheus writes them,
// without going through a float.
func parseTime(b []byte) (model.Time, error) {
	if bytes.ContainsAny(b, "eE") {
		f, err := strconv.ParseFloat(string(b), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return 0, fmt.Errorf("not a time: %q", b)
		}
		return model.Time(math.Round(f * 1000)), nil
	}
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	intPart, frac, _ := bytes.Cut(b, []byte{'.'})
	sec, err := strconv.ParseInt(string(intPart), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("not a time: %q", b)
	}
	ms := int64(0)
	for i := range 3 {
		ms *= 10
		if i < len(frac) {
			d := frac[i]
			if d < '0' || d > '9' {
				return 0, fmt.Errorf("not a time: %q", b)
			}
			ms += int64(d - '0')
		}
	}
	t := sec*1000 + ms
	if neg {
		t = -t
	}
	return model.Time(t), nil
}

// resultError rejects a result of a type other than vector and scalar.
func resultError(resultType string) error {
	switch resultType {
	case model.ValVector.String(), model.ValScalar.String():
		return nil
	case "":
		return fmt.Errorf("%w: answer without a result type", ErrBadQuery)
	}
	return fmt.Errorf("%w: result type %s, want vector or scalar", ErrBadQuery, resultType)
}
