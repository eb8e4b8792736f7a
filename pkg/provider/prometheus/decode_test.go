package prometheus

import (
	"errors"
	"math"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
)

func TestQueryAnswersAreDecodedAsTheyStream(t *testing.T) {
	tests := []struct {
		name string
		body string
		want []Sample
	}{{
		name: "only the asked-for labels are kept, in the order asked",
		body: `{"status":"success","data":{"resultType":"vector","result":[` +
			`{"metric":{"__name__":"x","pod":"a","namespace":"ns"},"value":[1700000000.5,"1.5"]},` +
			`{"metric":{"namespace":"ns"},"value":[1700000001,"2"]}]}}`,
		want: []Sample{
			{Labels: []string{"a", "ns"}, Value: 1.5, Timestamp: 1700000000500},
			{Labels: []string{"", "ns"}, Value: 2, Timestamp: 1700000001000},
		},
	}, {
		name: "keys in any order, white space and unknown fields are accepted",
		body: " {\n\"data\" : { \"result\" : [ { \"value\" : [ 1700000000.123 , \"3\" ] , \"extra\":{\"a\":[1,true,null]}, \"metric\" : { \"pod\" : \"b\" } } ], \"resultType\" : \"vector\" } , \"status\" : \"success\", \"stats\": {} }\n",
		want: []Sample{{Labels: []string{"b", ""}, Value: 3, Timestamp: 1700000000123}},
	}, {
		name: "escaped label values are unescaped",
		body: `{"status":"success","data":{"resultType":"vector","result":[{"metric":{"pod":"a\"b\u00e9\\"},"value":[1,"1"]}]}}`,
		want: []Sample{{Labels: []string{`a"bé\`, ""}, Value: 1, Timestamp: 1000}},
	}, {
		name: "NaN and infinities come through for the caller to drop",
		body: `{"status":"success","data":{"resultType":"vector","result":[{"metric":{"pod":"a"},"value":[1,"NaN"]},{"metric":{"pod":"b"},"value":[1,"+Inf"]},{"metric":{"pod":"c"},"value":[1,"-Inf"]}]}}`,
		want: []Sample{
			{Labels: []string{"a", ""}, Value: math.NaN(), Timestamp: 1000},
			{Labels: []string{"b", ""}, Value: math.Inf(1), Timestamp: 1000},
			{Labels: []string{"c", ""}, Value: math.Inf(-1), Timestamp: 1000},
		},
	}, {
		name: "a native histogram sample has no value and is left out",
		body: `{"status":"success","data":{"resultType":"vector","result":[{"metric":{"pod":"a"},"histogram":[1,{"count":"1","sum":"2","buckets":[[0,"0","1","1"]]}]}]}}`,
	}, {
		name: "a scalar is one sample without labels",
		body: `{"status":"success","data":{"resultType":"scalar","result":[1700000000,"42"]}}`,
		want: []Sample{{Labels: []string{"", ""}, Value: 42, Timestamp: 1700000000000}},
	}, {
		name: "an empty vector is no samples",
		body: `{"status":"success","data":{"resultType":"vector","result":[]}}`,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// One byte at a time: every token crosses a buffer refill.
			s := newScanner(iotest.OneByteReader(strings.NewReader(tc.body)), nil)
			sink := newLabelSink([]string{"pod", "namespace"})
			q := &queryReader{sink: sink}
			if _, err := readAnswer(s, http.StatusOK, q.data); err != nil {
				t.Fatalf("readAnswer = %v", err)
			}
			if err := q.check(); err != nil {
				t.Fatalf("check = %v", err)
			}
			if diff := cmp.Diff(tc.want, sink.out, cmp.Comparer(sameFloat)); diff != "" {
				t.Errorf("samples (-want +got):\n%s", diff)
			}
		})
	}
}

func sameFloat(a, b float64) bool { return a == b || (math.IsNaN(a) && math.IsNaN(b)) }

func TestMalformedAnswersAreClearErrors(t *testing.T) {
	tests := []struct {
		name      string
		body      string
		wantCause string
	}{
		{name: "a truncated answer", body: `{"status":"success","data":{"resultType":"vector","result":[{"metric":{"pod":"a"},"val`, wantCause: "unterminated string"},
		{name: "a truncated answer between tokens", body: `{"status":"success","data":{"resultType":"vector","result":[`, wantCause: "unexpected end of input"},
		{name: "a value that is not a number", body: `{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,"x"]}]}}`, wantCause: `bad sample value "x"`},
		{name: "a time that is not a number", body: `{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":["1","2"]}]}}`, wantCause: "want a number"},
		{name: "a missing colon", body: `{"status" "success"}`, wantCause: `got '"', want ':'`},
		{name: "trailing garbage", body: `{"status":"success","data":null} x`, wantCause: "after the end of the document"},
		{name: "HTML", body: `<html>`, wantCause: "malformed JSON at byte 0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := fakeProm(t, "", respondWith(http.StatusOK, tc.body))
			c := newTestClient(t, optionsFor(srv.URL), nil)
			_, err := c.QueryLabels(t.Context(), "up", time.Time{}, []string{"pod"})
			assertError(t, err, nil, `query "up": bad_response: malformed JSON`, tc.wantCause)
		})
	}
}

func TestErrorAnswersKeepTheirType(t *testing.T) {
	tests := []struct {
		name     string
		code     int
		body     string
		want     error
		wantType v1.ErrorType
	}{
		{name: "status error in a 200 answer", code: 200, body: `{"status":"error","errorType":"bad_data","error":"parse error"}`, want: ErrBadQuery, wantType: v1.ErrBadData},
		{name: "a timeout in a 200 answer is unavailable", code: 200, body: `{"status":"error","errorType":"timeout","error":"query timed out"}`, want: ErrUnavailable, wantType: v1.ErrTimeout},
		{name: "a 422 without an error type is a client error", code: 422, body: `{"status":"error"}`, wantType: v1.ErrClient},
		{name: "a 400 that is not JSON is a client error", code: 400, body: `nope`, wantType: v1.ErrClient},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := fakeProm(t, "", respondWith(tc.code, tc.body))
			c := newTestClient(t, optionsFor(srv.URL), nil)
			_, err := c.QueryLabels(t.Context(), "up", time.Time{}, nil)
			var apiErr *v1.Error
			if !errors.As(err, &apiErr) || apiErr.Type != tc.wantType {
				t.Fatalf("QueryLabels() = %v, want an API error of type %s", err, tc.wantType)
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("error %v does not wrap %v", err, tc.want)
			}
		})
	}
}

func TestSeriesKeepsOneLabelSetPerShape(t *testing.T) {
	body := `{"status":"success","data":[` +
		`{"__name__":"a","pod":"p1","namespace":"n"},` +
		`{"namespace":"n","__name__":"a","pod":"p2"},` +
		`{"__name__":"a","pod":"p3"},` +
		`{"__name__":"a","pod":"p4","namespace":""},` +
		`{"__name__":"b","pod":"p1","namespace":"n"},` +
		`{"pod":"nameless"}]}`
	srv, _ := fakeProm(t, "", respondWith(http.StatusOK, body))
	c := newTestClient(t, optionsFor(srv.URL), nil)
	got, err := c.Series(t.Context(), []string{"{pod!=\"\"}"}, time.Time{}, time.Time{})
	if err != nil {
		t.Fatalf("Series() = %v", err)
	}
	want := []model.LabelSet{
		{"__name__": "a", "pod": "p1", "namespace": "n"},
		{"__name__": "a", "pod": "p3"},
		{"__name__": "b", "pod": "p1", "namespace": "n"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Series() (-want +got):\n%s", diff)
	}
}

func TestTimesKeepMillisecondsExactly(t *testing.T) {
	tests := []struct {
		in   string
		want model.Time
	}{
		{"1700000000", 1700000000000},
		{"1700000000.1", 1700000000100},
		{"1700000000.999", 1700000000999},
		{"1700000000.9999", 1700000000999},
		{"-1.5", -1500},
		{"1.7e9", 1700000000000},
		{"17E+8", 1700000000000},
		{"1.0009e0", 1000},
		{"0.0009", 0},
		{"-0.0009", 0},
		{"9223372036854775.807", math.MaxInt64},
		{"-9223372036854775.808", math.MinInt64},
	}
	for _, tc := range tests {
		got, err := parseTime([]byte(tc.in))
		if err != nil || got != tc.want {
			t.Errorf("parseTime(%s) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"9223372036854775.808", "-9223372036854775.809", "1e17", "1e99999999999999999999", "01", "1.", ".5", "+1", "-"} {
		if got, err := parseTime([]byte(in)); err == nil {
			t.Errorf("parseTime(%s) = %d, want an error", in, got)
		}
	}
}

// TestAnswersAreReadAsEncodingJSONReadsThem holds the disagreements FuzzDecodeAnswer found
// between the streaming decoder and encoding/json, each now read as encoding/json reads it (or
// rejected, where encoding/json rejects the bytes or the answer format does).
func TestAnswersAreReadAsEncodingJSONReadsThem(t *testing.T) {
	const pod = `{"metric":{"pod":"a"},"value":[1,"5"]}`
	answer := func(result string) string {
		return `{"status":"success","data":{"resultType":"vector","result":[` + result + `]}}`
	}
	tests := []struct {
		name    string
		body    string
		want    model.Vector // when it is read
		wantErr string       // when it is rejected
	}{
		{name: "a vector answer with a scalar result is rejected", body: `{"status":"success","data":{"resultType":"vector","result":[1700000000,"5"]}}`, wantErr: "result type vector with a scalar result"},
		{name: "a scalar answer with an empty result is rejected", body: `{"status":"success","data":{"resultType":"scalar","result":[]}}`, wantErr: "result type scalar with a vector result"},
		{name: "an answer without a result is rejected", body: `{"status":"success","data":{"resultType":"vector"}}`, wantErr: "without a result"},
		{name: "a time beyond int64 milliseconds is rejected, not wrapped", body: answer(`{"metric":{},"value":[99999999999999999,"5"]}`), wantErr: "out of range"},
		{name: "a time with an exponent is truncated like one without", body: answer(`{"metric":{},"value":[1.0009e0,"5"]},{"metric":{},"value":[1.0009,"6"]}`),
			want: model.Vector{{Metric: model.Metric{}, Value: 5, Timestamp: 1000}, {Metric: model.Metric{}, Value: 6, Timestamp: 1000}}},
		{name: "a number with a leading zero is not JSON", body: answer(`{"metric":{},"value":[01,"5"]}`), wantErr: "malformed number"},
		{name: "a number ending in a point is not JSON", body: answer(`{"metric":{},"value":[1.,"5"]}`), wantErr: "malformed number"},
		{name: "a number skipped in an unknown field is checked too", body: `{"status":"success","x":+1,` + answer("")[1:], wantErr: "want a value"},
		{name: "a control character in a string is not JSON", body: answer("{\"metric\":{\"pod\":\"a\x01\"},\"value\":[1,\"5\"]}"), wantErr: "bad string"},
		{name: "invalid UTF-8 in a string reads as U+FFFD", body: answer("{\"metric\":{\"pod\":\"a\xff\"},\"value\":[1,\"5\"]}"),
			want: model.Vector{{Metric: model.Metric{"pod": "a\uFFFD"}, Value: 5, Timestamp: 1000}}},
		{name: "data given twice counts with the last", body: `{"status":"success","data":{"resultType":"vector","result":[` + pod + `]},"data":{"resultType":"vector","result":[]}}`, want: model.Vector{}},
		{name: "a metric given twice counts with the last labels", body: answer(`{"metric":{"pod":"a","namespace":"x"},"metric":{"pod":"b"},"value":[1,"5"]}`),
			want: model.Vector{{Metric: model.Metric{"pod": "b"}, Value: 5, Timestamp: 1000}}},
		{name: "an answer that does not say success is rejected", body: `{"data":{"resultType":"vector","result":[` + pod + `]}}`, wantErr: "want success or error"},
		{name: "nesting deeper than encoding/json allows is rejected", body: `{"status":"success","x":` + strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth) + `}`, wantErr: "nested more than 10000 deep"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, oracleErr := oracleQuery([]byte(tc.body)); (oracleErr == nil) != (tc.wantErr == "") {
				t.Fatalf("the oracle disagrees with this case: %v", oracleErr)
			}
			sink := &vectorSink{}
			_, err := decodeQueryForTest(strings.NewReader(tc.body), sink)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("decode = %v, want an error with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("decode = %v", err)
			}
			if diff := cmp.Diff(tc.want, sink.vector()); diff != "" {
				t.Errorf("vector (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDuplicateAnnotationsAndSeriesLabelsCountWithTheLast(t *testing.T) {
	s := newScanner(strings.NewReader(`{"status":"success","warnings":["w1"],"warnings":["w2"],"data":[{"__name__":"a","pod":"x","pod":""}]}`), nil)
	shapes := &shapeSet{}
	env, err := readAnswer(s, http.StatusOK, shapes.data)
	if err != nil {
		t.Fatalf("readAnswer = %v", err)
	}
	if diff := cmp.Diff([]string{"w2"}, env.warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]model.LabelSet{{"__name__": "a"}}, shapes.out); diff != "" {
		t.Errorf("series (-want +got):\n%s", diff)
	}
}
