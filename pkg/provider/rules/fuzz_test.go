package rules

import (
	"errors"
	"testing"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// FuzzSelectorToPromQL checks that nothing in a request changes the shape of a query: the
// rendered matchers always tokenize back into matchers on the requested labels that select
// exactly the requested values, or the request is refused with a sentinel error.
func FuzzSelectorToPromQL(f *testing.F) {
	f.Add("zone", uint8(0), "eu", "us", "dns", "web-1", "web-2")
	f.Add("zone", uint8(3), `"} or vector(1) #`, `\`, "a\nb", `a.b|c`, ".*")
	f.Add("app.kubernetes.io/name", uint8(6), "x", "", "", "p", "")
	f.Add("__name__", uint8(1), "\xff", "é\u2028", "ns", "\x00", "`")
	rule, err := compileRule(DiscoveryRule{
		SeriesQuery:  `{namespace!="",pod!=""}`,
		Resources:    ResourceMapping{Template: "<<.Resource>>"},
		MetricsQuery: `<<.LabelMatchers>>,pod=~"<<.LabelValuesByName.pod>>"`,
	}, StaticMapper(), false)
	if err != nil {
		f.Fatal(err)
	}
	external, err := compileRule(DiscoveryRule{SeriesQuery: `{namespace!=""}`, MetricsQuery: `<<.LabelMatchers>>`}, StaticMapper(), true)
	if err != nil {
		f.Fatal(err)
	}
	ops := []selection.Operator{selection.Equals, selection.DoubleEquals, selection.NotEquals, selection.In,
		selection.NotIn, selection.Exists, selection.DoesNotExist, selection.GreaterThan, selection.LessThan}
	f.Fuzz(func(t *testing.T, key string, op uint8, v1, v2, ns, name1, name2 string) {
		// One requirement, any operator, hostile values.
		operator := ops[int(op)%len(ops)]
		values := []string{v1, v2}
		switch operator {
		case selection.Equals, selection.DoubleEquals, selection.NotEquals:
			values = values[:1]
		case selection.Exists, selection.DoesNotExist:
			values = nil
		}
		m, err := requirementMatcher(key, operator, values)
		if err != nil {
			if !isSentinel(err) {
				t.Fatalf("requirementMatcher error %v is no sentinel", err)
			}
			if operator != selection.GreaterThan && operator != selection.LessThan && IsValidLabelName(key) && key[:min(2, len(key))] != "__" && utf8.ValidString(v1) && utf8.ValidString(v2) {
				t.Fatalf("valid requirement %q %s %q refused: %v", key, operator, values, err)
			}
		} else {
			assertMatcherInvariants(t, m.String(), map[string][]string{key: values})
		}

		// A whole request: metric selector, namespace and object names.
		if key == "namespace" || key == "pod" {
			return
		}
		names := []string{name1}
		if name2 != "" {
			names = append(names, name2)
		}
		q, err := rule.Query(ObjectRequest{Series: "s", Resource: podsGR, Namespace: ns, Names: names,
			Selector: labels.SelectorFromValidatedSet(labels.Set{key: v1})})
		if err != nil {
			if !isSentinel(err) {
				t.Fatalf("Query error %v is no sentinel", err)
			}
			return
		}
		want := map[string][]string{key: {v1}, "pod": names}
		if ns != "" {
			want["namespace"] = []string{ns}
		}
		assertMatcherInvariants(t, q, want)

		// The same selector and namespace as an external request.
		q, err = external.ExternalQuery(ExternalRequest{Series: "s", Namespace: ns, Selector: labels.SelectorFromValidatedSet(labels.Set{key: v1})})
		if err != nil {
			t.Fatalf("ExternalQuery failed where Query succeeded: %v", err)
		}
		delete(want, "pod")
		assertMatcherInvariants(t, q, want)
	})
}

func isSentinel(err error) bool {
	for _, s := range []error{ErrUnsupportedOperator, ErrInvalidLabelName, ErrInvalidValue, ErrMalformedRequirement, ErrNoObjectNames, ErrInvalidSeriesName} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}
