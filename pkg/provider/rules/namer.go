package rules

import (
	"fmt"
	"regexp"
	"sort"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Series is a discovered Prometheus series: its name and labels.
type Series struct {
	// Name is the metric name.
	Name string
	// Labels are the series labels without __name__; an empty value counts as absent.
	Labels map[string]string
}

// SeriesInfo says how a rule serves a discovered series.
type SeriesInfo struct {
	// Series is the Prometheus series name, to pass back in requests.
	Series string
	// Metric is the API metric name.
	Metric string
	// Resources are the group-resources the metric is served for (custom rules only), sorted.
	Resources []ResourceInfo
	// Namespaced is, for custom rules, whether the series carries the namespace label and, for
	// external rules, whether requests are matched on their namespace.
	Namespaced bool
}

// ResourceInfo is one group-resource a custom metric is served for.
type ResourceInfo struct {
	// GroupResource is the normalized group-resource.
	GroupResource schema.GroupResource
	// Namespaced is true when objects are addressed within a namespace: the series is
	// namespaced and the resource is neither namespaces nor nodes (as prometheus-adapter).
	Namespaced bool
}

// Rule is a compiled discovery rule, custom or external. It is immutable and safe for
// concurrent use.
type Rule struct {
	seriesQuery string
	selector    seriesSelector
	filters     []nameFilter
	nameRe      *regexp.Regexp
	nameAs      string
	resources   *resourceMapping
	query       *compiledQuery
	external    bool
	namespaced  bool
	backend     string
}

type nameFilter struct {
	re       *regexp.Regexp
	positive bool
}

// SeriesQuery returns the rule's Prometheus series selector, for /api/v1/series discovery;
// rules sharing a selector can share one discovery call.
func (r *Rule) SeriesQuery() string { return r.seriesQuery }

// Backend names the backend whose series the rule discovers and queries: DefaultBackend or one
// of RuleSet.Backends.
func (r *Rule) Backend() string { return r.backend }

// External reports whether the rule serves external metrics.
func (r *Rule) External() bool { return r.external }

// Describe decides whether the rule serves a series and how: the series must match the
// seriesQuery, every seriesFilter and name.matches; a custom rule must also map at least one
// label to a resource.
func (r *Rule) Describe(s Series) (SeriesInfo, bool) {
	if !r.selector.matchesSeries(s.Name, s.Labels) {
		return SeriesInfo{}, false
	}
	for _, f := range r.filters {
		if f.re.MatchString(s.Name) != f.positive {
			return SeriesInfo{}, false
		}
	}
	metric, ok := r.MetricName(s.Name)
	if !ok {
		return SeriesInfo{}, false
	}
	info := SeriesInfo{Series: s.Name, Metric: metric}
	if r.external {
		info.Namespaced = r.namespaced
		return info, true
	}
	names := make([]string, 0, len(s.Labels))
	for k, v := range s.Labels {
		if v != "" {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	grs, namespaced := r.resources.resourcesForLabels(names)
	if len(grs) == 0 {
		return SeriesInfo{}, false
	}
	info.Namespaced = namespaced
	for _, gr := range grs {
		scoped := namespaced && gr != namespacesResource() && gr != nodesResource()
		info.Resources = append(info.Resources, ResourceInfo{GroupResource: gr, Namespaced: scoped})
	}
	return info, true
}

// MetricName returns the API metric name for a series name: name.matches (unanchored) expanded
// with name.as, as prometheus-adapter does. It reports false when the name does not match.
func (r *Rule) MetricName(series string) (string, bool) {
	idx := r.nameRe.FindStringSubmatchIndex(series)
	if idx == nil {
		return "", false
	}
	name := string(r.nameRe.ExpandString(nil, r.nameAs, series, idx))
	return name, name != ""
}

// compileRule compiles one discovery rule; cfg must have passed Validate.
func compileRule(cfg DiscoveryRule, mapper ResourceMapper, external bool, limits Limits) (*Rule, error) {
	sel, err := parseSeriesSelector(cfg.SeriesQuery)
	if err != nil {
		return nil, fmt.Errorf("seriesQuery: %w", err)
	}
	r := &Rule{seriesQuery: cfg.SeriesQuery, selector: sel, external: external, namespaced: true, backend: backendOf(cfg.Backend)}
	if cfg.Resources.Namespaced != nil {
		r.namespaced = *cfg.Resources.Namespaced
	}
	for _, f := range cfg.SeriesFilters {
		expr, positive := f.Is, true
		if expr == "" {
			expr, positive = f.IsNot, false
		}
		re, err := regexp.Compile(expr)
		if err != nil {
			return nil, fmt.Errorf("seriesFilters: %w", err)
		}
		r.filters = append(r.filters, nameFilter{re: re, positive: positive})
	}
	if r.nameRe, r.nameAs, err = compileName(cfg.Name); err != nil {
		return nil, fmt.Errorf("name: %w", err)
	}
	if r.resources, err = compileResourceMapping(cfg.Resources, mapper); err != nil {
		return nil, fmt.Errorf("resources.%w", err)
	}
	if r.query, err = compileQuery(cfg.MetricsQuery, limits); err != nil {
		return nil, fmt.Errorf("metricsQuery: %w", err)
	}
	return r, nil
}

// compileName applies prometheus-adapter's defaults: matches "" is the whole name, as "" is $0
// without capture groups and $1 with exactly one.
func compileName(cfg NameMapping) (*regexp.Regexp, string, error) {
	expr := cfg.Matches
	if expr == "" {
		expr = ".*"
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, "", err
	}
	as := cfg.As
	if as == "" {
		switch re.NumSubexp() {
		case 0:
			as = "$0"
		case 1:
			as = "$1"
		default:
			return nil, "", fmt.Errorf("as is required when matches %q has %d capture groups", expr, re.NumSubexp())
		}
	}
	return re, as, nil
}
