package rules

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// RuleSet is a compiled Config. It is immutable and safe for concurrent use.
type RuleSet struct {
	// Custom are the compiled custom-metric rules, in file order.
	Custom []*Rule
	// External are the compiled external-metric rules, in file order.
	External []*Rule
	// Resource holds the resource-metric rules; nil when the file has none.
	Resource *ResourceQueries
	// Backends are the rule file's backends besides DefaultBackend, as written.
	Backends []Backend
}

// ResourceQueries holds the compiled CPU and memory rules and their window.
type ResourceQueries struct {
	// CPU is the compiled cpu rule.
	CPU *ResourceQuery
	// Memory is the compiled memory rule.
	Memory *ResourceQuery
	// Window is the window reported with every sample.
	Window time.Duration
	// Backend names the backend both rules read: DefaultBackend or one of RuleSet.Backends.
	Backend string
}

// DefaultMaxQueryBytes is the default of Limits.MaxQueryBytes: 15 KiB, 1 KiB below
// VictoriaMetrics' default -search.maxQueryLen (16 KiB, the smallest limit of the common
// PromQL backends), the KiB left for a proxy that adds matchers on the way (a tenant's label).
// Far above what any separable rule renders for a sane metric selector (a few hundred bytes);
// a request naming more objects is split into several queries (QueryChunks).
const DefaultMaxQueryBytes = 15 << 10

// Limits bound what a compiled rule set renders.
type Limits struct {
	// MaxQueryBytes is the most bytes a rendered query may have; a request whose query would be
	// longer is split by object names (QueryChunks) or fails with ErrQueryTooLarge. 0 means
	// DefaultMaxQueryBytes.
	MaxQueryBytes int
}

func (l Limits) maxQueryBytes() int {
	if l.MaxQueryBytes <= 0 {
		return DefaultMaxQueryBytes
	}
	return l.MaxQueryBytes
}

// ResourceQuery is one compiled resource-metric rule (cpu or memory).
type ResourceQuery struct {
	container      *compiledQuery
	node           *compiledQuery
	resources      *resourceMapping
	containerLabel string
}

// Compile validates cfg and compiles it; mapper normalizes resource overrides and template
// labels (pass the provider's RESTMapper, or StaticMapper offline), and limits bound the queries
// the rules render. All errors are returned, each naming its field path.
func Compile(cfg *Config, mapper ResourceMapper, limits Limits) (*RuleSet, error) {
	if errs := cfg.Validate(); len(errs) > 0 {
		return nil, fmt.Errorf("invalid rule file: %w", errs.ToAggregate())
	}
	var errs field.ErrorList
	set := &RuleSet{Backends: cfg.Backends}
	for i, rc := range cfg.Rules {
		r, err := compileRule(rc, mapper, false, limits)
		if err != nil {
			errs = append(errs, field.Invalid(field.NewPath("rules").Index(i), rc.SeriesQuery, err.Error()))
			continue
		}
		set.Custom = append(set.Custom, r)
	}
	for i, rc := range cfg.ExternalRules {
		r, err := compileRule(rc, mapper, true, limits)
		if err != nil {
			errs = append(errs, field.Invalid(field.NewPath("externalRules").Index(i), rc.SeriesQuery, err.Error()))
			continue
		}
		set.External = append(set.External, r)
	}
	if rr := cfg.ResourceRules; rr != nil {
		set.Resource = &ResourceQueries{Window: time.Duration(rr.Window), Backend: backendOf(rr.Backend)}
		var err error
		path := field.NewPath("resourceRules")
		if set.Resource.CPU, err = compileResourceRule(rr.CPU, mapper, limits); err != nil {
			errs = append(errs, field.Invalid(path.Child("cpu"), "", err.Error()))
		}
		if set.Resource.Memory, err = compileResourceRule(rr.Memory, mapper, limits); err != nil {
			errs = append(errs, field.Invalid(path.Child("memory"), "", err.Error()))
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("compile rule file: %w", errs.ToAggregate())
	}
	return set, nil
}

func compileResourceRule(cfg ResourceRule, mapper ResourceMapper, limits Limits) (*ResourceQuery, error) {
	rm, err := compileResourceMapping(cfg.Resources, mapper)
	if err != nil {
		return nil, fmt.Errorf("resources.%w", err)
	}
	container, err := compileQuery(cfg.ContainerQuery, limits)
	if err != nil {
		return nil, fmt.Errorf("containerQuery: %w", err)
	}
	node, err := compileQuery(cfg.NodeQuery, limits)
	if err != nil {
		return nil, fmt.Errorf("nodeQuery: %w", err)
	}
	return &ResourceQuery{container: container, node: node, resources: rm, containerLabel: cfg.ContainerLabel}, nil
}

// ContainerQuery renders the per-container query for pods (req.Resource is pods); results are
// grouped by the pod label and ContainerLabel. req.Series may be empty: resource queries name
// their series themselves.
func (r *ResourceQuery) ContainerQuery(req ObjectRequest) (string, error) {
	return objectQuery(r.container, r.resources, req, r.containerLabel)
}

// NodeQuery renders the per-node query (req.Resource is nodes, req.Namespace empty).
func (r *ResourceQuery) NodeQuery(req ObjectRequest) (string, error) {
	return objectQuery(r.node, r.resources, req)
}

// ContainerLabel returns the label holding container names in ContainerQuery results.
func (r *ResourceQuery) ContainerLabel() string { return r.containerLabel }

// Separable returns nil when the query for gr (pods: ContainerQuery, nodes: NodeQuery) may ask
// for every object at once (ObjectRequest.AllObjects) and be filtered by name without changing
// any object's value, or an error wrapping ErrNotSeparable that says why not; see separable.go.
func (r *ResourceQuery) Separable(gr schema.GroupResource) error {
	label, err := r.resources.labelForResource(gr)
	if err != nil {
		return err
	}
	if gr == nodesResource() {
		return r.node.sep.check([]string{label})
	}
	return r.container.sep.check([]string{label, r.containerLabel})
}

// LabelForResource returns the label carrying object names of gr in this rule's results.
func (r *ResourceQuery) LabelForResource(gr schema.GroupResource) (string, error) {
	return r.resources.labelForResource(gr)
}
