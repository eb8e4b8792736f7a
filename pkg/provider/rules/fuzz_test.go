package rules

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// fuzzSeries is the series every fuzzed request asks for.
const fuzzSeries = "zdns_vanguard_queries_total"

// spliceQuery is a custom rule that also splices .LabelValuesByName into a second selector,
// as prometheus-adapter users do.
const spliceQuery = `sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>) * on (pod) group_left ` +
	`count(kube_pod_info{pod=~"<<.LabelValuesByName.pod>>"}) by (pod)`

// fuzzRules are the rules the fuzz target renders requests with: every default custom rule that
// maps pods, every default external rule, and the splice rule.
type fuzzRules struct {
	custom   []*Rule
	external []*Rule
	splice   *Rule
}

func compileFuzzRules(f *testing.F) fuzzRules {
	set, err := Compile(Default(), StaticMapper(), Limits{})
	if err != nil {
		f.Fatal(err)
	}
	var out fuzzRules
	for _, r := range set.Custom {
		if _, err := r.LabelForResource(podsGR); err == nil {
			out.custom = append(out.custom, r)
		}
	}
	out.external = set.External
	out.splice, err = compileRule(DiscoveryRule{
		SeriesQuery:  `{namespace!="",pod!=""}`,
		Resources:    ResourceMapping{Template: "<<.Resource>>"},
		MetricsQuery: spliceQuery,
	}, StaticMapper(), false, Limits{})
	if err != nil {
		f.Fatal(err)
	}
	if len(out.custom) == 0 || len(out.external) == 0 {
		f.Fatalf("default rules give %d custom rules on pods and %d external rules", len(out.custom), len(out.external))
	}
	return out
}

// maxFuzzInput bounds FuzzSelectorToPromQL's inputs so that even escaped four times over they
// stay under DefaultMaxQueryBytes.
const maxFuzzInput = DefaultMaxQueryBytes / 8

// FuzzSelectorToPromQL checks that nothing in a request changes the shape of a query. For one
// label selector requirement with any operator and hostile values, and for whole requests
// (selector, namespace, object names) rendered by the default rules and a rule splicing
// .LabelValuesByName, the query is lexed by the test's own PromQL lexer and
//   - has the same token sequence, strings blanked, as the same request with benign values;
//   - its selectors carry exactly the intended matchers: the same labels, operators and values
//     (regexes select exactly the intended values);
//
// or the request is refused with a sentinel error, and only when an input is invalid.
func FuzzSelectorToPromQL(f *testing.F) {
	f.Add("zone", uint8(0), "eu", "us", "dns", "web-1", "web-2")
	f.Add("zone", uint8(3), `"} or vector(1) #`, `\`, "a\nb", `a.b|c`, ".*")
	f.Add("app.kubernetes.io/name", uint8(6), "x", "", "", "p", "")
	f.Add("__name__", uint8(1), "\xff", "é\u2028", "ns", "\x00", "`")
	f.Add("zone", uint8(4), "a`b", "'", "ns`) or (`", `p"}) by (pod) or vector(1) #`, "p\\")
	rules := compileFuzzRules(f)
	ops := []selection.Operator{selection.Equals, selection.DoubleEquals, selection.NotEquals, selection.In,
		selection.NotIn, selection.Exists, selection.DoesNotExist, selection.GreaterThan, selection.LessThan}
	f.Fuzz(func(t *testing.T, key string, op uint8, v1, v2, ns, name1, name2 string) {
		if len(key)+len(v1)+len(v2)+len(ns)+len(name1)+len(name2) > maxFuzzInput {
			return // may render past the query size limit: TestRenderedQuerySizeIsCapped
		}
		checkRequirement(t, key, ops[int(op)%len(ops)], v1, v2)
		if key == "namespace" || key == "pod" {
			return // the request's own matchers on these labels are checked below
		}
		names := []string{name1}
		if name2 != "" {
			names = append(names, name2)
		}
		valid := checkLabelName(key) == nil && utf8.ValidString(v1) && utf8.ValidString(ns) &&
			utf8.ValidString(name1) && utf8.ValidString(name2)
		req := fuzzRequest{key: key, value: v1, ns: ns, names: names}
		for _, r := range rules.custom {
			checkObjectQuery(t, r, req, valid, nil)
		}
		checkObjectQuery(t, rules.splice, req, valid, []map[string]intent{{"pod": {"=~", names}}})
		for _, r := range rules.external {
			checkExternalQuery(t, r, req)
		}
	})
}

// fuzzRequest is one whole request: a selector key=value, a namespace and object names.
type fuzzRequest struct {
	key, value, ns string
	names          []string
}

// benign is the same request with harmless values of the same structure.
func (r fuzzRequest) benign() fuzzRequest {
	b := fuzzRequest{key: r.key, value: "a"}
	if r.ns != "" {
		b.ns = "n"
	}
	for i := range r.names {
		b.names = append(b.names, "p"+string(rune('1'+i)))
	}
	return b
}

func (r fuzzRequest) object() ObjectRequest {
	return ObjectRequest{Series: fuzzSeries, Resource: podsGR, Namespace: r.ns, Names: r.names,
		Selector: labels.SelectorFromValidatedSet(labels.Set{r.key: r.value})}
}

func (r fuzzRequest) external() ExternalRequest {
	return ExternalRequest{Series: fuzzSeries, Namespace: r.ns, Selector: labels.SelectorFromValidatedSet(labels.Set{r.key: r.value})}
}

// intents are the matchers the request's own selector must carry.
func (r fuzzRequest) intents(withNames bool) map[string]intent {
	want := map[string]intent{r.key: {"=", []string{r.value}}}
	if r.ns != "" {
		want["namespace"] = intent{"=", []string{r.ns}}
	}
	if withNames {
		if len(r.names) == 1 {
			want["pod"] = intent{"=", r.names}
		} else {
			want["pod"] = intent{"=~", r.names}
		}
	}
	return want
}

func checkObjectQuery(t *testing.T, r *Rule, req fuzzRequest, valid bool, extra []map[string]intent) {
	t.Helper()
	q, err := r.Query(req.object())
	ref, refErr := r.Query(req.benign().object())
	checkQuery(t, q, err, ref, refErr, valid, append([]map[string]intent{req.intents(true)}, extra...))
}

func checkExternalQuery(t *testing.T, r *Rule, req fuzzRequest) {
	t.Helper()
	// External requests carry no object names; a non-UTF-8 name cannot make them fail.
	valid := checkLabelName(req.key) == nil && utf8.ValidString(req.value) && utf8.ValidString(req.ns)
	q, err := r.ExternalQuery(req.external())
	ref, refErr := r.ExternalQuery(req.benign().external())
	checkQuery(t, q, err, ref, refErr, valid, []map[string]intent{req.intents(false)})
}

// checkQuery asserts the shape and the matchers of q against the benign reference ref.
func checkQuery(t *testing.T, q string, err error, ref string, refErr error, valid bool, want []map[string]intent) {
	t.Helper()
	if err != nil {
		if !isSentinel(err) {
			t.Fatalf("query error %v is no sentinel", err)
		}
		if valid {
			t.Fatalf("valid request refused: %v", err)
		}
		return
	}
	if !valid {
		t.Fatalf("invalid request accepted: %q", q)
	}
	if refErr != nil {
		t.Fatalf("benign reference refused: %v", refErr)
	}
	tokens, err := lexPromQL(q)
	if err != nil {
		t.Fatalf("query does not lex: %v", err)
	}
	refTokens, err := lexPromQL(ref)
	if err != nil {
		t.Fatalf("reference %q does not lex: %v", ref, err)
	}
	if got, wantShape := shape(tokens), shape(refTokens); got != wantShape {
		t.Fatalf("query shape changed:\n got %s\nwant %s\nquery %q", got, wantShape, q)
	}
	selectors, err := selectorMatchers(tokens)
	if err != nil {
		t.Fatalf("query %q: %v", q, err)
	}
	if len(selectors) != len(want) {
		t.Fatalf("query %q has %d selectors, want %d", q, len(selectors), len(want))
	}
	for i, sel := range selectors {
		if err := checkMatchers(sel, want[i]); err != nil {
			t.Fatalf("selector %d of %q: %v", i, q, err)
		}
	}
}

// checkRequirement renders one requirement alone and checks its matcher against the intent.
func checkRequirement(t *testing.T, key string, operator selection.Operator, v1, v2 string) {
	t.Helper()
	values := []string{v1, v2}
	var want intent
	switch operator {
	case selection.Equals, selection.DoubleEquals:
		values = values[:1]
		want = intent{"=", values}
	case selection.NotEquals:
		values = values[:1]
		want = intent{"!=", values}
	case selection.In:
		want = intent{"=~", values}
	case selection.NotIn:
		want = intent{"!~", values}
	case selection.Exists:
		values, want = nil, intent{"!=", []string{""}}
	case selection.DoesNotExist:
		values, want = nil, intent{"=", []string{""}}
	}
	m, err := requirementMatcher(key, operator, values)
	if err != nil {
		if !isSentinel(err) {
			t.Fatalf("requirementMatcher error %v is no sentinel", err)
		}
		if operator != selection.GreaterThan && operator != selection.LessThan && checkLabelName(key) == nil && utf8.ValidString(v1) && utf8.ValidString(v2) {
			t.Fatalf("valid requirement %q %s %q refused: %v", key, operator, values, err)
		}
		return
	}
	tokens, err := lexPromQL("{" + m.String() + "}")
	if err != nil {
		t.Fatalf("matcher does not lex: %v", err)
	}
	sel, err := selectorMatchers(tokens)
	if err != nil || len(sel) != 1 {
		t.Fatalf("matcher %q: %d selectors, %v", m.String(), len(sel), err)
	}
	if err := checkMatchers(sel[0], map[string]intent{key: want}); err != nil {
		t.Fatalf("matcher %q: %v", m.String(), err)
	}
	assertMatcherInvariants(t, m.String(), map[string][]string{key: values})
}

// FuzzLoadRules feeds arbitrary rule files to the loader: it never panics (nor does the
// separability analysis of what it loads), a file it accepts compiles (unless it names a resource the RESTMapper does not know), and every compiled rule renders a hostile request (a quote-and-brace injection in
// every value) into a query of the same shape as a benign one, or refuses it with a sentinel.
func FuzzLoadRules(f *testing.F) {
	f.Add([]byte(DefaultYAML))
	f.Add([]byte("rules:\n- seriesQuery: '{__name__=~\"^x_.*\",namespace!=\"\"}'\n  resources: {template: <<.Resource>>}\n" +
		"  name: {matches: ^x_(.*)$, as: y_$1}\n  metricsQuery: 'max(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)'\n"))
	f.Add([]byte("externalRules:\n- seriesQuery: 'q{a=\"b\"}'\n  metricsQuery: <<.Series>>\n  resources: {namespaced: false}\n"))
	f.Add([]byte("resourceRules:\n  cpu: {containerQuery: x, nodeQuery: y, resources: {overrides: {node: {resource: node}}}, containerLabel: c}\n  window: 1m\n"))
	f.Add([]byte("rules: [{seriesQuery: '{', metricsQuery: '<<.Nope>>'}]"))
	f.Add([]byte("rules:\n- seriesQuery: x\n  metricQuery: typo\n"))
	f.Add([]byte("rules:\n- seriesQuery: '{pod!=\"\"}'\n  resources: {template: <<.Resource>>}\n" +
		"  metricsQuery: 'sum(x{<<.LabelMatchers>>}) by (<<.GroupBy>>) / on() group_left() sum(x{pod=~\"<<index .LabelValuesByName \"pod\">>\"}[5m:1m] offset 1m)'\n"))
	hostile := fuzzRequest{key: "zone", value: `a"} or vector(1) #`, ns: "ns\"`'", names: []string{`p"}`, `q\`}}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Load(data)
		if err != nil {
			return
		}
		set, err := Compile(cfg, StaticMapper(), Limits{})
		if err != nil {
			// Load cannot know the cluster's resources; only Compile, given a RESTMapper, can
			// reject an unknown one (the provider then keeps its last good rules). That is the
			// only reason a loaded file may fail to compile.
			if !strings.Contains(err.Error(), "normalize group-resource") {
				t.Fatalf("a loaded rule file does not compile: %v\n%s", err, data)
			}
			return
		}
		for _, r := range set.Custom {
			// The separability analysis parses whatever the template renders; it must not panic,
			// and a query for every object fails exactly when it says the rule is not separable.
			_, allErr := r.Query(ObjectRequest{Series: fuzzSeries, Resource: podsGR, Namespace: "ns", AllObjects: true})
			if sepErr := r.Separable(podsGR); sepErr == nil && errors.Is(allErr, ErrNotSeparable) {
				t.Fatalf("rule %+v: separable, but a query for every object fails: %v", r, allErr)
			}
			q, err := r.Query(hostile.object())
			ref, refErr := r.Query(hostile.benign().object())
			checkSameShape(t, q, err, ref, refErr, r)
		}
		for _, r := range set.External {
			q, err := r.ExternalQuery(hostile.external())
			ref, refErr := r.ExternalQuery(hostile.benign().external())
			checkSameShape(t, q, err, ref, refErr, r)
		}
	})
}

// checkSameShape asserts that a hostile and a benign query lex into the same shape whenever
// the rule's own template lexes (a rule author may write anything, but no request value may
// change what was written).
func checkSameShape(t *testing.T, q string, err error, ref string, refErr error, r *Rule) {
	t.Helper()
	if err != nil || refErr != nil {
		// A rule that cannot serve the request (say, it maps no pods) refuses both alike.
		if (err == nil) != (refErr == nil) {
			t.Fatalf("rule %+v: hostile query error %v, benign %v", r, err, refErr)
		}
		return
	}
	refTokens, err := lexPromQL(ref)
	if err != nil {
		return // the template itself is not PromQL this lexer reads; nothing to compare
	}
	tokens, err := lexPromQL(q)
	if err != nil {
		t.Fatalf("hostile values break the lexing of a rule's query: %v\nbenign: %s\nhostile: %s", err, ref, q)
	}
	if shape(tokens) != shape(refTokens) {
		t.Fatalf("hostile values change the shape of a rule's query:\nbenign: %s\nhostile: %s", ref, q)
	}
}

func isSentinel(err error) bool {
	for _, s := range []error{ErrUnsupportedOperator, ErrInvalidLabelName, ErrInvalidValue, ErrMalformedRequirement, ErrNoObjectNames, ErrInvalidSeriesName} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}
