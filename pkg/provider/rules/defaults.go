package rules

// DefaultYAML is the default rule file, shipped as a ConfigMap; Default returns the same rules.
//
// Naming: a counter X_queries_total is served as X_qps (so zdns_vanguard_queries_total is
// zdns_vanguard_qps), any other counter X_total as X_per_second (as in prometheus-adapter's
// docs), and a gauge under its own name. When a counter and a gauge yield the same name for the
// same resource (zdns_vanguard_queries_total and a gauge zdns_vanguard_qps), the earlier rule,
// the counter, wins. Counters are rated over 1m: scrape every 30s or faster (15s recommended).
//
// Per-namespace gauges (no pod label) are served for namespaces too.
// Custom metrics are served for pods and namespaces only (labels pod and namespace, as
// overrides rather than a template, so a scrape label such as job is never taken for batch/jobs).
// External metrics are every series with a namespace label, matched on the request's namespace
// and the metric label selector and summed into one value. Histogram buckets and OpenMetrics
// _created series are skipped. All custom rules share one discovery selector, as do external
// ones, so discovery costs three /api/v1/series calls.
const DefaultYAML = `# podpilot default rules (prometheus-adapter format).
rules:
# Per-pod counters X_queries_total are served as per-second rates named X_qps.
- seriesQuery: '{namespace!="",pod!=""}'
  resources:
    overrides:
      namespace: {resource: namespace}
      pod: {resource: pod}
  name:
    matches: ^(.+)_queries_total$
    as: ${1}_qps
  metricsQuery: sum(rate(<<.Series>>{<<.LabelMatchers>>}[1m])) by (<<.GroupBy>>)
# Other per-pod counters X_total are served as per-second rates named X_per_second.
- seriesQuery: '{namespace!="",pod!=""}'
  seriesFilters:
  - isNot: _queries_total$
  resources:
    overrides:
      namespace: {resource: namespace}
      pod: {resource: pod}
  name:
    matches: ^(.+)_total$
    as: ${1}_per_second
  metricsQuery: sum(rate(<<.Series>>{<<.LabelMatchers>>}[1m])) by (<<.GroupBy>>)
# Per-pod gauges are served as they are, under their own name.
- seriesQuery: '{namespace!="",pod!=""}'
  seriesFilters:
  - isNot: (_total|_bucket|_created)$
  resources:
    overrides:
      namespace: {resource: namespace}
      pod: {resource: pod}
  metricsQuery: sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)
# Per-namespace gauges (a namespace label and no pod label) are served for namespaces.
- seriesQuery: '{namespace!="",pod=""}'
  seriesFilters:
  - isNot: (_total|_bucket|_created)$
  resources:
    overrides:
      namespace: {resource: namespace}
  metricsQuery: sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)
externalRules:
# Any series with a namespace label, summed over the request's namespace and selector.
- seriesQuery: '{namespace!=""}'
  resources:
    overrides:
      namespace: {resource: namespace}
  name:
    matches: ^(.+)_queries_total$
    as: ${1}_qps
  metricsQuery: sum(rate(<<.Series>>{<<.LabelMatchers>>}[1m]))
- seriesQuery: '{namespace!=""}'
  seriesFilters:
  - isNot: _queries_total$
  resources:
    overrides:
      namespace: {resource: namespace}
  name:
    matches: ^(.+)_total$
    as: ${1}_per_second
  metricsQuery: sum(rate(<<.Series>>{<<.LabelMatchers>>}[1m]))
- seriesQuery: '{namespace!=""}'
  seriesFilters:
  - isNot: (_total|_bucket|_created)$
  resources:
    overrides:
      namespace: {resource: namespace}
  metricsQuery: sum(<<.Series>>{<<.LabelMatchers>>})
`

// Default returns the default rule set, equal to DefaultYAML loaded (a test asserts it).
func Default() *Config {
	podMapping := func() ResourceMapping {
		return ResourceMapping{Overrides: map[string]GroupResource{
			"namespace": {Resource: "namespace"},
			"pod":       {Resource: "pod"},
		}}
	}
	nsMapping := func() ResourceMapping {
		return ResourceMapping{Overrides: map[string]GroupResource{"namespace": {Resource: "namespace"}}}
	}
	const (
		perPod  = `{namespace!="",pod!=""}`
		perNS   = `{namespace!=""}`
		nsOnly  = `{namespace!="",pod=""}`
		rate    = `sum(rate(<<.Series>>{<<.LabelMatchers>>}[1m]))`
		gauge   = `sum(<<.Series>>{<<.LabelMatchers>>})`
		byGroup = ` by (<<.GroupBy>>)`
	)
	qps := NameMapping{Matches: `^(.+)_queries_total$`, As: `${1}_qps`}
	perSecond := NameMapping{Matches: `^(.+)_total$`, As: `${1}_per_second`}
	notQueries := []RegexFilter{{IsNot: `_queries_total$`}}
	notCounters := []RegexFilter{{IsNot: `(_total|_bucket|_created)$`}}
	return &Config{
		Rules: []DiscoveryRule{
			{SeriesQuery: perPod, Resources: podMapping(), Name: qps, MetricsQuery: rate + byGroup},
			{SeriesQuery: perPod, SeriesFilters: notQueries, Resources: podMapping(), Name: perSecond, MetricsQuery: rate + byGroup},
			{SeriesQuery: perPod, SeriesFilters: notCounters, Resources: podMapping(), MetricsQuery: gauge + byGroup},
			{SeriesQuery: nsOnly, SeriesFilters: notCounters, Resources: nsMapping(), MetricsQuery: gauge + byGroup},
		},
		ExternalRules: []DiscoveryRule{
			{SeriesQuery: perNS, Resources: nsMapping(), Name: qps, MetricsQuery: rate},
			{SeriesQuery: perNS, SeriesFilters: notQueries, Resources: nsMapping(), Name: perSecond, MetricsQuery: rate},
			{SeriesQuery: perNS, SeriesFilters: notCounters, Resources: nsMapping(), MetricsQuery: gauge},
		},
	}
}
