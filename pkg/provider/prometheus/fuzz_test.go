package prometheus

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/prometheus/common/model"
)

// FuzzDecodeAnswer decodes any bytes as an instant-query answer (into a model.Vector, and into
// Samples of two labels with the input arriving one byte at a time, so that every token crosses
// a buffer refill) and as a series answer, and checks each against the oracle: encoding/json's
// decoding of the same bytes, read by the rules of Prometheus' answer format (oracleQuery,
// oracleSeries). Both must accept the same answers, and then agree on every sample, label,
// time, value, warning and series shape.
func FuzzDecodeAnswer(f *testing.F) {
	for _, seed := range []string{
		vectorBody,
		seriesBody,
		`{"status":"success","data":{"resultType":"scalar","result":[1700000000.123,"42"]}}`,
		`{"status":"success","warnings":["store a unavailable"],"infos":["x"],"data":{"resultType":"vector","result":[]}}`,
		`{"status":"error","errorType":"bad_data","error":"parse error","data":null}`,
		`{"data":{"result":[{"value":[1.7e9,"NaN"],"metric":{"pod":"a\u00e9\"","pod":"b"}}],"resultType":"vector"},"status":"success"}`,
		`{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"histogram":[1,{"count":"1"}]}]}}`,
		`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[1,"1"]]}]}}`,
		`{"status":"success","data":[{"__name__":"a","pod":"x","pod":"y"},{"__name__":"a","pod":""}],"data":null}`,
		`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"pod":"a"},"value":[-9223372036854775.808,"-0x1p-2"]}]}}`,
		`{"status":"success","x":[{"a":[true,false,null,-0.5e-3]}],"data":{"resultType":"scalar","result":[0.0001e4,"+Inf"]}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		want, wantErr := oracleQuery(body)
		vec := &vectorSink{}
		gotEnv, gotErr := decodeQueryForTest(bytes.NewReader(body), vec)
		checkAgreement(t, "query into a vector", body, wantErr, gotErr)
		labels := newLabelSink([]string{"pod", "namespace"})
		_, labelsErr := decodeQueryForTest(iotest.OneByteReader(bytes.NewReader(body)), labels)
		checkAgreement(t, "query into samples, one byte at a time", body, wantErr, labelsErr)
		if wantErr == nil && gotErr == nil && labelsErr == nil {
			if diff := cmp.Diff(want.vector(), vec.vector(), cmp.Comparer(sameBits), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("vector of %q (-oracle +decoder):\n%s", body, diff)
			}
			if diff := cmp.Diff(want.labelSamples(labels.names), labels.out, cmp.Comparer(sameBits), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("samples of %q (-oracle +decoder):\n%s", body, diff)
			}
			if diff := cmp.Diff(want.env, annotations{warnings: gotEnv.warnings, infos: gotEnv.infos}, cmp.AllowUnexported(annotations{}), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("warnings and infos of %q (-oracle +decoder):\n%s", body, diff)
			}
		}

		wantShapes, wantErr := oracleSeries(body)
		shapes := &shapeSet{}
		_, gotErr = readAnswer(newScanner(iotest.HalfReader(bytes.NewReader(body)), nil), http.StatusOK, shapes.data)
		checkAgreement(t, "series", body, wantErr, gotErr)
		if wantErr == nil && gotErr == nil {
			if diff := cmp.Diff(wantShapes, shapes.out, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("series of %q (-oracle +decoder):\n%s", body, diff)
			}
		}
	})
}

// decodeQueryForTest decodes an instant-query answer into sink as the client does.
func decodeQueryForTest(r interface{ Read([]byte) (int, error) }, sink sampleSink) (envelope, error) {
	q := &queryReader{sink: sink}
	env, err := readAnswer(newScanner(r, nil), http.StatusOK, q.data)
	if err == nil {
		err = q.check()
	}
	return env, err
}

func checkAgreement(t *testing.T, what string, body []byte, oracleErr, decoderErr error) {
	t.Helper()
	if (oracleErr == nil) != (decoderErr == nil) {
		t.Errorf("%s of %q: oracle error %v, decoder error %v", what, body, oracleErr, decoderErr)
	}
}

func sameBits(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }

// annotations are an answer's warnings and infos.
type annotations struct{ warnings, infos []string }

// oracleAnswer is an instant-query answer as the oracle reads it.
type oracleAnswer struct {
	env     annotations
	samples []oracleSample
}

type oracleSample struct {
	labels map[string]string
	value  float64
	ts     model.Time
}

func (a oracleAnswer) vector() model.Vector {
	out := model.Vector{}
	for _, s := range a.samples {
		m := model.Metric{}
		for k, v := range s.labels {
			m[model.LabelName(k)] = model.LabelValue(v)
		}
		out = append(out, &model.Sample{Metric: m, Value: model.SampleValue(s.value), Timestamp: s.ts})
	}
	return out
}

func (a oracleAnswer) labelSamples(names []string) []Sample {
	var out []Sample
	for _, s := range a.samples {
		ls := make([]string, len(names))
		for i, n := range names {
			ls[i] = s.labels[n]
		}
		out = append(out, Sample{Labels: ls, Value: s.value, Timestamp: s.ts})
	}
	return out
}

// oracleEnvelope decodes body with encoding/json (numbers as json.Number) and checks the
// envelope: an object whose status, errorType and error are null or strings, whose warnings
// and infos are null or arrays of strings, and whose status is "success".
func oracleEnvelope(body []byte) (map[string]any, annotations, error) {
	if !json.Valid(body) {
		return nil, annotations{}, fmt.Errorf("not JSON")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, annotations{}, err
	}
	top, ok := doc.(map[string]any)
	if !ok {
		return nil, annotations{}, fmt.Errorf("not an object")
	}
	for _, k := range []string{"status", "errorType", "error"} {
		if _, ok := top[k].(string); !ok && top[k] != nil {
			return nil, annotations{}, fmt.Errorf("%s is not a string", k)
		}
	}
	var env annotations
	for k, dst := range map[string]*[]string{"warnings": &env.warnings, "infos": &env.infos} {
		if top[k] == nil {
			continue
		}
		list, ok := top[k].([]any)
		if !ok {
			return nil, annotations{}, fmt.Errorf("%s is not an array", k)
		}
		for _, v := range list {
			s, ok := v.(string)
			if !ok {
				return nil, annotations{}, fmt.Errorf("%s holds a non-string", k)
			}
			*dst = append(*dst, s)
		}
	}
	if top["status"] != "success" {
		return nil, annotations{}, fmt.Errorf("status %v", top["status"])
	}
	return top, env, nil
}

// oracleQuery reads an instant-query answer: data is an object whose resultType is vector or
// scalar (null or missing is no type); a vector result is an array of objects, each with an
// optional metric (an object of strings) and an optional value (a sample without one, a native
// histogram, is left out); a scalar result is one [time, "value"] pair. Times are JSON numbers
// of seconds, taken exactly, in milliseconds truncated toward zero, within int64; values are
// strings that strconv.ParseFloat reads.
func oracleQuery(body []byte) (oracleAnswer, error) {
	top, env, err := oracleEnvelope(body)
	if err != nil {
		return oracleAnswer{}, err
	}
	data, ok := top["data"].(map[string]any)
	if !ok {
		return oracleAnswer{}, fmt.Errorf("data is not an object")
	}
	result, ok := data["result"].([]any)
	if !ok {
		return oracleAnswer{}, fmt.Errorf("result is not an array")
	}
	a := oracleAnswer{env: env}
	switch data["resultType"] {
	case "vector":
		for _, el := range result {
			s, keep, err := oracleVectorSample(el)
			if err != nil {
				return oracleAnswer{}, err
			}
			if keep {
				a.samples = append(a.samples, s)
			}
		}
	case "scalar":
		v, ts, err := oraclePair(result)
		if err != nil {
			return oracleAnswer{}, err
		}
		a.samples = []oracleSample{{labels: map[string]string{}, value: v, ts: ts}}
	default:
		return oracleAnswer{}, fmt.Errorf("result type %v", data["resultType"])
	}
	return a, nil
}

func oracleVectorSample(el any) (oracleSample, bool, error) {
	obj, ok := el.(map[string]any)
	if !ok {
		return oracleSample{}, false, fmt.Errorf("sample is not an object")
	}
	s := oracleSample{labels: map[string]string{}}
	if m, present := obj["metric"]; present {
		labels, err := oracleLabels(m)
		if err != nil {
			return oracleSample{}, false, err
		}
		s.labels = labels
	}
	pair, present := obj["value"]
	if !present {
		return s, false, nil
	}
	list, ok := pair.([]any)
	if !ok {
		return oracleSample{}, false, fmt.Errorf("value is not an array")
	}
	var err error
	s.value, s.ts, err = oraclePair(list)
	return s, true, err
}

func oracleLabels(m any) (map[string]string, error) {
	obj, ok := m.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("labels are not an object")
	}
	out := make(map[string]string, len(obj))
	for k, v := range obj {
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("label %q is not a string", k)
		}
		out[k] = s
	}
	return out, nil
}

func oraclePair(pair []any) (float64, model.Time, error) {
	if len(pair) != 2 {
		return 0, 0, fmt.Errorf("pair of %d elements", len(pair))
	}
	n, ok := pair[0].(json.Number)
	if !ok {
		return 0, 0, fmt.Errorf("time is not a number")
	}
	ts, ok := oracleTime(n)
	if !ok {
		return 0, 0, fmt.Errorf("time %s out of range", n)
	}
	s, ok := pair[1].(string)
	if !ok {
		return 0, 0, fmt.Errorf("value is not a string")
	}
	v, err := strconv.ParseFloat(s, 64)
	return v, ts, err
}

// oracleTime is n seconds in milliseconds, truncated toward zero, computed with big.Rat; false
// when it does not fit an int64. Magnitudes decided by a float (far out of range, or below a
// millisecond) are decided so, to keep big.Rat from huge powers of ten.
func oracleTime(n json.Number) (model.Time, bool) {
	f, _ := strconv.ParseFloat(string(n), 64)
	switch {
	case math.Abs(f) >= 1e17:
		return 0, false
	case math.Abs(f) < 1e-4:
		return 0, true
	}
	r, ok := new(big.Rat).SetString(string(n))
	if !ok {
		return 0, false
	}
	r.Mul(r, big.NewRat(1000, 1))
	ms := new(big.Int).Quo(r.Num(), r.Denom())
	if !ms.IsInt64() {
		return 0, false
	}
	return model.Time(ms.Int64()), true
}

// oracleSeries reads a series answer: data is null or an array of objects of strings. It keeps
// the first series of each shape: a non-empty __name__ and the set of other label names with a
// non-empty value.
func oracleSeries(body []byte) ([]model.LabelSet, error) {
	top, _, err := oracleEnvelope(body)
	if err != nil {
		return nil, err
	}
	if top["data"] == nil {
		return nil, nil
	}
	list, ok := top["data"].([]any)
	if !ok {
		return nil, fmt.Errorf("data is not an array")
	}
	var out []model.LabelSet
	seen := map[string]bool{}
	for _, el := range list {
		labels, err := oracleLabels(el)
		if err != nil {
			return nil, err
		}
		name := labels[model.MetricNameLabel]
		if name == "" {
			continue
		}
		var names []string
		ls := model.LabelSet{}
		for k, v := range labels {
			if v != "" {
				ls[model.LabelName(k)] = model.LabelValue(v)
				if k != model.MetricNameLabel {
					names = append(names, k)
				}
			}
		}
		sort.Strings(names)
		shape := name + "\x00" + strings.Join(names, "\x00")
		if !seen[shape] {
			seen[shape] = true
			out = append(out, ls)
		}
	}
	return out, nil
}
