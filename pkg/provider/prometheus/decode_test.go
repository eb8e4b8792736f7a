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
			var resultType string
			env, err := decodeEnvelope(s, func() error {
				var err error
				resultType, err = queryData(s, sink)
				return err
			})
			if err != nil {
				t.Fatalf("decode = %v", err)
			}
			if err := env.apiError(http.StatusOK); err != nil {
				t.Fatalf("apiError = %v", err)
			}
			if err := resultError(resultType); err != nil {
				t.Fatalf("resultError = %v", err)
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
	}
	for _, tc := range tests {
		got, err := parseTime([]byte(tc.in))
		if err != nil || got != tc.want {
			t.Errorf("parseTime(%s) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
}
