package rules

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseSeriesSelector(t *testing.T) {
	type m struct{ Label, Op, Value string }
	tests := []struct {
		name  string
		input string
		want  []m
		bad   bool
	}{
		{name: "a bare metric name matches __name__", input: "http_requests_total", want: []m{{"__name__", "=", "http_requests_total"}}},
		{name: "a metric name with braces, spaces and a trailing comma", input: ` cheddar { sharp = "true" , } `,
			want: []m{{"__name__", "=", "cheddar"}, {"sharp", "=", "true"}}},
		{name: "all four operators", input: `{__name__=~"^container_.*",container!="POD",a!~"x|y",b="c"}`,
			want: []m{{"__name__", "=~", "^container_.*"}, {"container", "!=", "POD"}, {"a", "!~", "x|y"}, {"b", "=", "c"}}},
		{name: "single-quoted and backtick strings", input: "{a='it\\'s \"q\"',b=`raw\\d`}",
			want: []m{{"a", "=", `it's "q"`}, {"b", "=", `raw\d`}}},
		{name: "escapes in double-quoted strings", input: `{a="x\"y\\z\n"}`, want: []m{{"a", "=", "x\"y\\z\n"}}},
		{name: "a recording-rule name with colons", input: "job:requests:rate5m", want: []m{{"__name__", "=", "job:requests:rate5m"}}},
		{name: "an empty selector is invalid", input: "{}", bad: true},
		{name: "an unterminated brace is invalid", input: `{a="b"`, bad: true},
		{name: "an unterminated string is invalid", input: `{a="b}`, bad: true},
		{name: "a missing operator is invalid", input: `{a "b"}`, bad: true},
		{name: "an invalid regex is invalid", input: `{a=~"("}`, bad: true},
		{name: "trailing PromQL is invalid", input: `up or vector(1)`, bad: true},
		{name: "a label name with a colon is invalid", input: `{a:b="c"}`, bad: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sel, err := parseSeriesSelector(tc.input)
			if tc.bad {
				if err == nil {
					t.Fatalf("parse %q succeeded, want an error", tc.input)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []m
			for _, x := range sel {
				got = append(got, m{x.label, string(x.op), x.value})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("matchers (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSeriesSelectorMatchesLikePrometheus(t *testing.T) {
	sel, err := parseSeriesSelector(`{__name__=~"container_.*",container!="POD",namespace!="",pod=~"web-.*|"}`)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		series string
		labels map[string]string
		want   bool
	}{
		{"regexes are anchored: the name must start with container_", "x_container_cpu", map[string]string{"namespace": "n"}, false},
		{"all matchers hold", "container_cpu", map[string]string{"namespace": "n", "pod": "web-1"}, true},
		{"an absent label counts as empty: namespace!=\"\" fails", "container_cpu", map[string]string{"pod": "web-1"}, false},
		{"an absent label counts as empty: pod=~\"web-.*|\" holds", "container_cpu", map[string]string{"namespace": "n"}, true},
		{"!= excludes the value", "container_cpu", map[string]string{"namespace": "n", "container": "POD"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := sel.matchesSeries(tc.series, tc.labels); got != tc.want {
				t.Errorf("matchesSeries = %v, want %v", got, tc.want)
			}
		})
	}
}
