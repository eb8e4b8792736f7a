package metricsapi

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/metrics/pkg/apis/custom_metrics"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"
)

// matcherProm evaluates queries the way the shapes below need: it selects, for every vector
// selector in the query, the series whose name and labels satisfy the selector's matchers
// (PromQL semantics: regexes fully anchored), and hands the selections, in query order, to the
// shape's combine function. What a template does with the selections is the shape's; which
// series the query asks for is decided by the matchers podpilot actually sent.
type matcherProm struct {
	series  []model.Metric // each with __name__ and a value label "v"
	combine func(selections [][]model.Metric) model.Vector
}

// selectorRE finds vector selectors; matcherRE finds the matchers inside one.
var (
	selectorRE = regexp.MustCompile(`([a-zA-Z_:][a-zA-Z0-9_:]*)?\{([^{}]*)\}`)
	matcherRE  = regexp.MustCompile(`\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')\s*,?`)
)

func (m *matcherProm) query(q string) (model.Vector, error) {
	var selections [][]model.Metric
	for _, sel := range selectorRE.FindAllStringSubmatch(q, -1) {
		match, err := selectorMatch(sel[1], sel[2])
		if err != nil {
			return nil, fmt.Errorf("fake prometheus: %q: %w", q, err)
		}
		var selected []model.Metric
		for _, s := range m.series {
			if match(s) {
				selected = append(selected, s)
			}
		}
		selections = append(selections, selected)
	}
	return m.combine(selections), nil
}

// selectorMatch compiles the matchers of one selector.
func selectorMatch(name, body string) (func(model.Metric) bool, error) {
	var checks []func(model.Metric) bool
	if name != "" {
		checks = append(checks, func(s model.Metric) bool { return string(s[model.MetricNameLabel]) == name })
	}
	rest := body
	for strings.TrimSpace(rest) != "" {
		m := matcherRE.FindStringSubmatchIndex(rest)
		if m == nil || m[0] != 0 {
			return nil, fmt.Errorf("cannot read matchers %q", rest)
		}
		label, op, lit := rest[m[2]:m[3]], rest[m[4]:m[5]], rest[m[6]:m[7]]
		rest = rest[m[1]:]
		if lit[0] == '\'' {
			lit = `"` + strings.ReplaceAll(lit[1:len(lit)-1], `"`, `\"`) + `"`
		}
		value, err := strconv.Unquote(lit)
		if err != nil {
			return nil, err
		}
		re, err := regexp.Compile("^(?:" + value + ")$")
		if err != nil {
			return nil, err
		}
		checks = append(checks, func(s model.Metric) bool {
			v := string(s[model.LabelName(label)])
			switch op {
			case "=":
				return v == value
			case "!=":
				return v != value
			case "=~":
				return re.MatchString(v)
			default:
				return !re.MatchString(v)
			}
		})
	}
	return func(s model.Metric) bool {
		for _, c := range checks {
			if !c(s) {
				return false
			}
		}
		return true
	}, nil
}

// value returns a fake series' value.
func value(s model.Metric) float64 {
	v, _ := strconv.ParseFloat(string(s["v"]), 64)
	return v
}

// sumBy aggregates the values of the selected series by label l with agg.
func sumBy(selected []model.Metric, l string, agg func(a, b float64) float64) map[string]float64 {
	out := map[string]float64{}
	for _, s := range selected {
		key := string(s[model.LabelName(l)])
		if old, ok := out[key]; ok {
			out[key] = agg(old, value(s))
		} else {
			out[key] = value(s)
		}
	}
	return out
}

func add(a, b float64) float64 { return a + b }

func vector(byPod map[string]float64) model.Vector {
	out := model.Vector{}
	for pod, v := range byPod {
		out = append(out, sample(v, testNow, "pod", pod))
	}
	return out
}

// The template shapes of issue #22: which of them sharing may widen is the rules package's
// separability analysis; here each is checked against what a Prometheus would answer.
var templateShapes = []struct {
	name    string
	query   string
	combine func([][]model.Metric) model.Vector
	// widened is whether sharing asks for every pod (`pod!=""`): only separable rules.
	widened bool
}{
	{
		name:    "separable: .LabelMatchers, summed by .GroupBy",
		query:   `sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)`,
		combine: func(s [][]model.Metric) model.Vector { return vector(sumBy(s[0], "pod", add)) },
		widened: true,
	},
	{
		name:    ".LabelValuesByName in a matcher",
		query:   `sum(<<.Series>>{namespace="<<index .LabelValuesByName "namespace">>",pod=~"<<index .LabelValuesByName "pod">>"}) by (pod)`,
		combine: func(s [][]model.Metric) model.Vector { return vector(sumBy(s[0], "pod", add)) },
	},
	{
		name: ".LabelValuesByName in a string",
		query: `label_replace(max(<<.Series>>{namespace="<<index .LabelValuesByName "namespace">>",base='<<index .LabelValuesByName "pod">>-base'}) by (base),` +
			` "pod", "$1", "base", "(.*)-base")`,
		combine: func(s [][]model.Metric) model.Vector {
			byBase := sumBy(s[0], "base", func(a, b float64) float64 { return max(a, b) })
			byPod := map[string]float64{}
			for base, v := range byBase {
				byPod[strings.TrimSuffix(base, "-base")] = v
			}
			return vector(byPod)
		},
	},
	{
		name:  "a join with on() whose other side sums the requested objects",
		query: `sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>) / on() group_left() sum(<<.Series>>{<<.LabelMatchers>>})`,
		combine: func(s [][]model.Metric) model.Vector {
			byPod, total := sumBy(s[0], "pod", add), 0.0
			for _, x := range s[1] {
				total += value(x)
			}
			for pod := range byPod {
				byPod[pod] /= total
			}
			return vector(byPod)
		},
	},
}

// outcome is what a request answered: values by object name (milli-units), or an error.
type outcome struct {
	Values map[string]int64
	Code   int
	Error  string
}

func TestSharingNeverChangesAnAnswer(t *testing.T) {
	const metric = "zdns_vanguard_queries_per_second"
	seriesQuery := `{__name__="zdns_vanguard_queries_total",namespace!="",pod!=""}`
	rule := `rules:
- seriesQuery: '` + seriesQuery + `'
  resources: {overrides: {namespace: {resource: namespace}, pod: {resource: pod}}}
  name: {matches: '^(.*)_total$', as: '${1}_per_second'}
  metricsQuery: %s
`
	series := []model.Metric{}
	for _, s := range []struct{ ns, pod, v string }{
		{"ns", "p1", "1"}, {"ns", "p2", "3"}, {"ns", "p3", "4"},
		{"ns", "gone", "8"},    // a pod the cluster no longer has
		{"other", "p1", "100"}, // another namespace
	} {
		series = append(series, model.Metric{model.MetricNameLabel: "zdns_vanguard_queries_total",
			"namespace": model.LabelValue(s.ns), "pod": model.LabelValue(s.pod), "base": model.LabelValue(s.pod + "-base"), "v": model.LabelValue(s.v)})
	}
	objs := []runtime.Object{
		pod("ns", "p1", map[string]string{"app": "web"}),
		pod("ns", "p2", map[string]string{"app": "web"}),
		pod("ns", "p3", map[string]string{"app": "db"}),
	}
	info := provider.CustomMetricInfo{GroupResource: podsGR, Namespaced: true, Metric: metric}
	requests := []struct {
		name string
		call func(p *Provider) (map[string]int64, error)
	}{
		{name: "by name", call: func(p *Provider) (map[string]int64, error) {
			v, err := p.GetMetricByName(t.Context(), types.NamespacedName{Namespace: "ns", Name: "p1"}, info, labels.Everything())
			if err != nil {
				return nil, err
			}
			return map[string]int64{v.DescribedObject.Name: v.Value.MilliValue()}, nil
		}},
		{name: "by selector", call: func(p *Provider) (map[string]int64, error) {
			return listValues(p.GetMetricBySelector(t.Context(), "ns", labels.SelectorFromSet(labels.Set{"app": "web"}), info, labels.Everything()))
		}},
		{name: "pods/*", call: func(p *Provider) (map[string]int64, error) {
			return listValues(p.GetMetricBySelector(t.Context(), "ns", labels.Everything(), info, labels.Everything()))
		}},
	}
	// want is prometheus-adapter's answer: its per-request query with the names filled in.
	want := map[string]map[string]outcome{
		templateShapes[0].name: {
			"by name": {Values: map[string]int64{"p1": 1000}}, "by selector": {Values: map[string]int64{"p1": 1000, "p2": 3000}},
			"pods/*": {Values: map[string]int64{"p1": 1000, "p2": 3000, "p3": 4000}},
		},
		templateShapes[1].name: {
			"by name": {Values: map[string]int64{"p1": 1000}}, "by selector": {Values: map[string]int64{"p1": 1000, "p2": 3000}},
			"pods/*": {Values: map[string]int64{"p1": 1000, "p2": 3000, "p3": 4000}},
		},
		templateShapes[2].name: { // `base='p1|p2-base'` is an equality: several names match nothing
			"by name": {Values: map[string]int64{"p1": 1000}}, "by selector": {Code: 404}, "pods/*": {Code: 404},
		},
		templateShapes[3].name: {
			"by name": {Values: map[string]int64{"p1": 1000}}, "by selector": {Values: map[string]int64{"p1": 250, "p2": 750}},
			"pods/*": {Values: map[string]int64{"p1": 125, "p2": 375, "p3": 500}},
		},
	}
	for _, shape := range templateShapes {
		for _, req := range requests {
			t.Run(shape.name+"/"+req.name, func(t *testing.T) {
				path := rulesFile(t, fmt.Sprintf(rule, strconv.Quote(shape.query)))
				got := map[string]outcome{}
				for _, sharing := range []string{"shared", "unshared"} {
					fake := &matcherProm{series: series, combine: shape.combine}
					prom := &fakeProm{series: map[string][]model.LabelSet{seriesQuery: {labelSet("zdns_vanguard_queries_total", "namespace", "ns", "pod", "p1")}}, query: fake.query}
					var p *Provider
					if sharing == "shared" {
						p = defaultProvider(t, prom, path, objs...)
					} else {
						p = servingProvider(t, prom, path, objs...)
					}
					values, err := req.call(p)
					got[sharing] = outcome{Values: values, Code: statusCode(err)}
					if err != nil {
						got[sharing] = outcome{Code: statusCode(err), Error: err.Error()}
					}
					widened := len(prom.queries) > 0 && strings.Contains(prom.queries[0], `pod!=""`)
					// Without sharing a separable rule asks for every pod only for pods/*.
					if want := shape.widened && (sharing == "shared" || req.name == "pods/*"); widened != want {
						t.Errorf("%s: queries %q, want widened to every pod: %v", sharing, prom.queries, want)
					}
				}
				if diff := cmp.Diff(got["unshared"], got["shared"]); diff != "" {
					t.Errorf("sharing changed the answer (-unshared +shared):\n%s", diff)
				}
				w := want[shape.name][req.name]
				if w.Code == 0 {
					w.Code = 200
				}
				if diff := cmp.Diff(w, got["shared"], cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Error" }, cmp.Ignore())); diff != "" {
					t.Errorf("answer differs from prometheus-adapter's (-adapter +podpilot):\n%s", diff)
				}
			})
		}
	}
}

// listValues maps a list's values by object name.
func listValues(list *custom_metrics.MetricValueList, err error) (map[string]int64, error) {
	if err != nil {
		return nil, err
	}
	out := make(map[string]int64, len(list.Items))
	for _, v := range list.Items {
		out[v.DescribedObject.Name] = v.Value.MilliValue()
	}
	return out, nil
}
