package framework

// ServiceRulesYAML is one custom rule (an item of a rule file's rules list)
// serving per-Service gauges, series labelled namespace and service, for the
// services of their namespace: the data of Object metrics on a Service.
const ServiceRulesYAML = `# Per-service gauges (a service label) are served for services (Object metrics).
- seriesQuery: '{namespace!="",service!=""}'
  seriesFilters:
  - isNot: (_total|_bucket|_created)$
  resources:
    overrides:
      namespace: {resource: namespace}
      service: {resource: service}
  metricsQuery: sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)
`
