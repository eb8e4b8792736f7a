package rules

import (
	"fmt"

	pmodel "github.com/prometheus/common/model"
	"sigs.k8s.io/yaml"
)

// Config is a rule file in prometheus-adapter's format (its docs/config.md): discovery rules for
// custom metrics, discovery rules for external metrics and optional resource-metrics rules.
type Config struct {
	// Rules discover Prometheus series and serve them as custom metrics attached to Kubernetes
	// objects. Rules are applied independently; when two rules yield the same metric for the same
	// group-resource, the earlier rule wins.
	Rules []DiscoveryRule `json:"rules,omitempty"`
	// ExternalRules discover Prometheus series and serve them as external metrics.
	ExternalRules []DiscoveryRule `json:"externalRules,omitempty"`
	// ResourceRules, when set, serve CPU and memory as the resource metrics API (metrics.k8s.io).
	ResourceRules *ResourceRules `json:"resourceRules,omitempty"`
	// Backends are PromQL backends besides the default one (--prometheus-url), which rules
	// name in their backend field. podpilot's addition; prometheus-adapter has one backend.
	Backends []Backend `json:"backends,omitempty"`
}

// DiscoveryRule describes how to find series (seriesQuery, seriesFilters), which Kubernetes
// resources they belong to (resources), how they are named in the API (name) and how a request
// is turned into PromQL (metricsQuery).
type DiscoveryRule struct {
	// SeriesQuery is a Prometheus series selector, as passed to /api/v1/series, e.g.
	// `{__name__=~"^container_.*",namespace!="",pod!=""}`.
	SeriesQuery string `json:"seriesQuery"`
	// SeriesFilters further filter the discovered series by name; all must match.
	SeriesFilters []RegexFilter `json:"seriesFilters,omitempty"`
	// Resources maps series labels to Kubernetes group-resources.
	Resources ResourceMapping `json:"resources,omitempty"`
	// Name maps a series name to the API metric name.
	Name NameMapping `json:"name,omitempty"`
	// MetricsQuery is a Go text/template with `<<` and `>>` delimiters over QueryArgs.
	MetricsQuery string `json:"metricsQuery,omitempty"`
	// Backend names the backend (Config.Backends) whose series the rule discovers and queries;
	// empty means DefaultBackend. podpilot's addition.
	Backend string `json:"backend,omitempty"`
}

// RegexFilter matches a series name positively (Is) or negatively (IsNot); exactly one is set.
// The regex is unanchored, as in prometheus-adapter.
type RegexFilter struct {
	// Is keeps series whose name matches this regex.
	Is string `json:"is,omitempty"`
	// IsNot keeps series whose name does not match this regex.
	IsNot string `json:"isNot,omitempty"`
}

// ResourceMapping maps Prometheus labels to Kubernetes group-resources.
type ResourceMapping struct {
	// Template maps label names to group-resources generically, e.g. `<<.Resource>>` or
	// `kube_<<.Group>>_<<.Resource>>`. `.Resource` is the singular resource and `.Group` the
	// group with dots and dashes replaced by underscores.
	Template string `json:"template,omitempty"`
	// Overrides maps individual label names to group-resources and wins over Template.
	Overrides map[string]GroupResource `json:"overrides,omitempty"`
	// Namespaced, for external rules only, says whether the request's namespace is added as a
	// label matcher (default true). It is accepted and ignored on other rules.
	Namespaced *bool `json:"namespaced,omitempty"`
}

// GroupResource names a Kubernetes group-resource; the resource may be singular or plural.
type GroupResource struct {
	// Group is the API group, empty for the core group.
	Group string `json:"group,omitempty"`
	// Resource is the resource, e.g. "pod" or "pods".
	Resource string `json:"resource"`
}

// NameMapping turns a series name into an API metric name.
type NameMapping struct {
	// Matches is an unanchored regex over the series name; empty means the whole name.
	// A non-empty Matches also acts as an implicit `is` series filter.
	Matches string `json:"matches,omitempty"`
	// As is the API name with $1, ${1}, $name expansions from Matches. Empty means $0 when
	// Matches has no capture group and $1 when it has exactly one; more groups require As.
	As string `json:"as,omitempty"`
}

// ResourceRules describe how CPU and memory are read for the resource metrics API.
type ResourceRules struct {
	// CPU is the rule for the cpu resource, in cores.
	CPU ResourceRule `json:"cpu"`
	// Memory is the rule for the memory resource, in bytes.
	Memory ResourceRule `json:"memory"`
	// Window is the window reported by the resource metrics API; it should match the range used
	// by rate() in the queries.
	Window pmodel.Duration `json:"window"`
	// Backend names the backend (Config.Backends) of both rules; empty means DefaultBackend. It
	// may not be a backend with tenantFromNamespace: metrics.k8s.io lists pods of every
	// namespace in one query, and nodes have no namespace. podpilot's addition.
	Backend string `json:"backend,omitempty"`
}

// ResourceRule describes how one system resource is queried for containers and nodes.
type ResourceRule struct {
	// ContainerQuery is a metricsQuery-style template returning per-container values.
	ContainerQuery string `json:"containerQuery"`
	// NodeQuery is a metricsQuery-style template returning per-node values.
	NodeQuery string `json:"nodeQuery"`
	// Resources maps series labels to group-resources (typically node, namespace and pod).
	Resources ResourceMapping `json:"resources"`
	// ContainerLabel is the label holding the container name.
	ContainerLabel string `json:"containerLabel"`
}

// Load parses a rule file strictly (unknown and duplicate fields are errors) and validates it,
// returning every validation error at once, each naming its field path.
func Load(data []byte) (*Config, error) {
	cfg := &Config{}
	if err := yaml.UnmarshalStrict(data, cfg); err != nil {
		if unknown := unknownFields(data); len(unknown) > 0 {
			return nil, fmt.Errorf("parse rule file: %w", unknown.ToAggregate())
		}
		return nil, fmt.Errorf("parse rule file: %w", err)
	}
	if errs := cfg.Validate(); len(errs) > 0 {
		return nil, fmt.Errorf("invalid rule file: %w", errs.ToAggregate())
	}
	return cfg, nil
}
