package rules

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

func TestRequirementMatcher(t *testing.T) {
	long := strings.Repeat(`a"\`, 3400) // 10,200 hostile bytes
	tests := []struct {
		name   string
		key    string
		op     selection.Operator
		values []string
		want   string
		err    error
	}{
		{name: "= renders =", key: "zone", op: selection.Equals, values: []string{"eu"}, want: `zone="eu"`},
		{name: "== renders =", key: "zone", op: selection.DoubleEquals, values: []string{"eu"}, want: `zone="eu"`},
		{name: "!= renders !=", key: "zone", op: selection.NotEquals, values: []string{"eu"}, want: `zone!="eu"`},
		{name: "in renders =~ with an alternation", key: "zone", op: selection.In, values: []string{"eu", "us"}, want: `zone=~"eu|us"`},
		{name: "notin renders !~", key: "zone", op: selection.NotIn, values: []string{"eu", "us"}, want: `zone!~"eu|us"`},
		{name: "exists renders !=\"\"", key: "zone", op: selection.Exists, want: `zone!=""`},
		{name: "does-not-exist renders =\"\"", key: "zone", op: selection.DoesNotExist, want: `zone=""`},
		{name: "gt is unsupported", key: "n", op: selection.GreaterThan, values: []string{"1"}, err: ErrUnsupportedOperator},
		{name: "lt is unsupported", key: "n", op: selection.LessThan, values: []string{"1"}, err: ErrUnsupportedOperator},
		{name: "a quote and brace cannot close the matcher: \"} injection", key: "zone", op: selection.Equals,
			values: []string{`eu"} or vector(1) or up{a="`}, want: `zone="eu\"} or vector(1) or up{a=\""`},
		{name: "a backslash is escaped", key: "zone", op: selection.Equals, values: []string{`a\`}, want: `zone="a\\"`},
		{name: "a newline is escaped", key: "zone", op: selection.Equals, values: []string{"a\nb"}, want: `zone="a\nb"`},
		{name: "printable unicode stays, invisible unicode is escaped", key: "zone", op: selection.Equals,
			values: []string{"é\u2028"}, want: `zone="é\u2028"`},
		{name: "in values are regex-quoted, so metacharacters match literally", key: "zone", op: selection.In,
			values: []string{".*", "a|b", `x"`}, want: `zone=~"\\.\\*|a\\|b|x\""`},
		{name: "notin with a backslash is regex- then string-escaped", key: "zone", op: selection.NotIn,
			values: []string{`\d`}, want: `zone!~"\\\\d"`},
		{name: "a 10k hostile value stays one string", key: "zone", op: selection.Equals, values: []string{long},
			want: "zone=" + strconv.Quote(long)},
		{name: "a label name with a dot is refused", key: "app.kubernetes.io/name", op: selection.Equals, values: []string{"x"}, err: ErrInvalidLabelName},
		{name: "a label name with a quote is refused", key: `a"b`, op: selection.Exists, err: ErrInvalidLabelName},
		{name: "a label name starting with a digit is refused", key: "1a", op: selection.Exists, err: ErrInvalidLabelName},
		{name: "an empty label name is refused", key: "", op: selection.Exists, err: ErrInvalidLabelName},
		{name: "a reserved label name is refused", key: "__name__", op: selection.Equals, values: []string{"x"}, err: ErrInvalidLabelName},
		{name: "a value that is not UTF-8 is refused", key: "zone", op: selection.Equals, values: []string{"\xff"}, err: ErrInvalidValue},
		{name: "= with two values is malformed", key: "zone", op: selection.Equals, values: []string{"a", "b"}, err: ErrMalformedRequirement},
		{name: "in without values is malformed", key: "zone", op: selection.In, err: ErrMalformedRequirement},
		{name: "exists with a value is malformed", key: "zone", op: selection.Exists, values: []string{"a"}, err: ErrMalformedRequirement},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := requirementMatcher(tc.key, tc.op, tc.values)
			if !errors.Is(err, tc.err) {
				t.Fatalf("error = %v, want %v", err, tc.err)
			}
			if err != nil {
				return
			}
			if diff := cmp.Diff(tc.want, m.String()); diff != "" {
				t.Errorf("matcher (-want +got):\n%s", diff)
			}
			assertMatcherInvariants(t, m.String(), map[string][]string{tc.key: tc.values})
		})
	}
}

func TestSelectorMatchersFromParsedSelector(t *testing.T) {
	got, err := SelectorMatchers(mustSelector(t, "b!=x,a in (2,1),c,!d"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Matcher{{"a", "=~", "1|2"}, {"b", "!=", "x"}, {"c", "!=", ""}, {"d", "=", ""}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("matchers are sorted by key, values sorted (-want +got):\n%s", diff)
	}
	if got, err := SelectorMatchers(labels.Everything()); err != nil || len(got) != 0 {
		t.Errorf("Everything() = %v, %v; want no matchers", got, err)
	}
	if _, err := SelectorMatchers(labels.Nothing()); !errors.Is(err, ErrMalformedRequirement) {
		t.Errorf("Nothing() error = %v, want ErrMalformedRequirement", err)
	}
}

// matcherRE is the test's own tokenizer for one rendered matcher: a label name, an operator and
// a double-quoted string, nothing else.
var matcherRE = regexp.MustCompile(`^([a-zA-Z_][a-zA-Z0-9_]*)(=~|!~|!=|=)("(?:[^"\\\n]|\\.)*")`)

// splitMatchers tokenizes a comma-separated matcher list, failing on anything else.
func splitMatchers(t *testing.T, s string) [][3]string {
	t.Helper()
	var out [][3]string
	for s != "" {
		m := matcherRE.FindStringSubmatch(s)
		if m == nil {
			t.Fatalf("cannot tokenize matcher list at %q", s)
		}
		value, err := strconv.Unquote(m[3])
		if err != nil {
			t.Fatalf("value %s does not unquote: %v", m[3], err)
		}
		out = append(out, [3]string{m[1], m[2], value})
		s = s[len(m[0]):]
		if s != "" {
			if s[0] != ',' {
				t.Fatalf("expected a comma at %q", s)
			}
			s = s[1:]
		}
	}
	return out
}

// assertMatcherInvariants checks that rendered matchers tokenize back into matchers on the
// requested labels only, and that each selects exactly the requested values of its label.
func assertMatcherInvariants(t *testing.T, rendered string, want map[string][]string) {
	t.Helper()
	for _, m := range splitMatchers(t, rendered) {
		label, op, value := m[0], m[1], m[2]
		values, ok := want[label]
		if !ok {
			t.Errorf("matcher on unrequested label %q in %q", label, rendered)
			continue
		}
		if op == "=" || op == "!=" {
			wantValue := ""
			if len(values) == 1 {
				wantValue = values[0]
			}
			if value != wantValue {
				t.Errorf("label %q value %q, want %q", label, value, wantValue)
			}
			continue
		}
		re, err := regexp.Compile("^(?s:" + value + ")$")
		if err != nil {
			t.Fatalf("regex %q does not compile: %v", value, err)
		}
		in := map[string]bool{}
		for _, v := range values {
			in[v] = true
		}
		for _, probe := range append([]string{"", "x", ".*", "a|b"}, values...) {
			if re.MatchString(probe) != in[probe] {
				t.Errorf("regex %q matches %q = %v, want %v", value, probe, !in[probe], in[probe])
			}
		}
	}
}
