package rules

import (
	"errors"
	"fmt"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ErrNoObjectNames is returned for an object request with no names and AllObjects unset.
var ErrNoObjectNames = errors.New("no object names requested")

// ObjectRequest is a request for a custom (or resource) metric on Kubernetes objects.
type ObjectRequest struct {
	// Series is the Prometheus series name, SeriesInfo.Series of the discovered series.
	Series string
	// Resource is the normalized (plural) group-resource of the objects.
	Resource schema.GroupResource
	// Namespace scopes the objects; empty for root-scoped resources.
	Namespace string
	// Names are the object names; past MaxNamesMatcherBytes, set AllObjects instead for a
	// separable rule, or render with QueryChunks, which splits them.
	Names []string
	// AllObjects matches every object of Resource (`label!=""`) instead of Names; the caller
	// filters the result by name.
	AllObjects bool
	// Selector is the metric label selector; nil selects everything.
	Selector labels.Selector
	// NamesPattern, with AllObjects, narrows every object to those whose name matches this RE2
	// expression in whole (`label=~"pattern"`), in the series selector: Prometheus then reads
	// only their series. A pattern that does not compile is ErrInvalidValue.
	NamesPattern string
}

// ExternalRequest is a request for an external metric.
type ExternalRequest struct {
	// Series is the Prometheus series name, SeriesInfo.Series of the discovered series.
	Series string
	// Namespace is the namespace of the request; it is matched when the rule is namespaced.
	Namespace string
	// Selector is the metric label selector; nil selects everything.
	Selector labels.Selector
}

// objectQuery renders an object query with the given extra group-by labels; it serves custom
// rules and both resource-rule queries.
func objectQuery(c *compiledQuery, rm *resourceMapping, req ObjectRequest, extraGroupBy ...string) (string, error) {
	if req.Series != "" {
		if err := checkSeriesName(req.Series); err != nil {
			return "", err
		}
	}
	ms, resLabel, err := objectMatchers(rm, req)
	if err != nil {
		return "", err
	}
	groupBy := append([]string{resLabel}, extraGroupBy...)
	if req.AllObjects && c.sep != nil {
		if err := c.sep.check(groupBy); err != nil {
			return "", fmt.Errorf("query every object of %s at once: %w", req.Resource.String(), err)
		}
	}
	q, err := c.render(queryArgs(req.Series, ms, groupBy))
	if err != nil {
		return "", fmt.Errorf("render query for series %q on %s: %w", req.Series, req.Resource.String(), err)
	}
	return q, nil
}

// objectMatchers returns the matchers of an object query (the request's selector, its namespace,
// its objects) and the label that names the objects.
func objectMatchers(rm *resourceMapping, req ObjectRequest) ([]Matcher, string, error) {
	ms, err := SelectorMatchers(req.Selector)
	if err != nil {
		return nil, "", err
	}
	if req.Namespace != "" {
		nsLabel, err := rm.labelForResource(namespacesResource())
		if err != nil {
			return nil, "", err
		}
		m, err := valueMatcher(nsLabel, req.Namespace)
		if err != nil {
			return nil, "", fmt.Errorf("namespace: %w", err)
		}
		ms = append(ms, m)
	}
	resLabel, err := rm.labelForResource(req.Resource)
	if err != nil {
		return nil, "", err
	}
	nm, err := namesMatcher(resLabel, req.Names, req.AllObjects)
	if err == nil && req.AllObjects && req.NamesPattern != "" {
		nm, err = patternMatcher(resLabel, req.NamesPattern)
	}
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", req.Resource.String(), err)
	}
	return append(ms, nm), resLabel, nil
}

// valueMatcher is an equality matcher on a request-provided value.
func valueMatcher(label, value string) (Matcher, error) {
	if err := checkLabelName(label); err != nil {
		return Matcher{}, err
	}
	if !utf8.ValidString(value) {
		return Matcher{}, ErrInvalidValue
	}
	return Matcher{Label: label, Op: string(opEqual), Value: value}, nil
}

// Query renders the PromQL for a custom-metric request of a custom rule. Its result has one
// series per object, labelled with LabelForResource(req.Resource).
func (r *Rule) Query(req ObjectRequest) (string, error) {
	if err := checkSeriesName(req.Series); err != nil {
		return "", err
	}
	return objectQuery(r.query, r.resources, req)
}

// ExternalQuery renders the PromQL for an external-metric request of an external rule. The
// namespace is matched only when the rule is namespaced (the default); an external rule without
// a namespace mapping matches it on the "namespace" label.
func (r *Rule) ExternalQuery(req ExternalRequest) (string, error) {
	return r.externalQuery(r.query, req)
}

// externalQuery renders c over req's series and matchers.
func (r *Rule) externalQuery(c *compiledQuery, req ExternalRequest) (string, error) {
	if err := checkSeriesName(req.Series); err != nil {
		return "", err
	}
	ms, err := SelectorMatchers(req.Selector)
	if err != nil {
		return "", err
	}
	if r.namespaced && req.Namespace != "" {
		nsLabel, err := r.resources.labelForResource(namespacesResource())
		if err != nil {
			nsLabel = "namespace"
		}
		m, err := valueMatcher(nsLabel, req.Namespace)
		if err != nil {
			return "", fmt.Errorf("namespace: %w", err)
		}
		ms = append(ms, m)
	}
	q, err := c.render(queryArgs(req.Series, ms, nil))
	if err != nil {
		return "", fmt.Errorf("render external query for series %q: %w", req.Series, err)
	}
	return q, nil
}

// Separable returns nil when the query for objects of gr may ask for every object at once
// (ObjectRequest.AllObjects) and be filtered by name without changing any object's value, or
// an error wrapping ErrNotSeparable that says why not; see separable.go. Requests that share
// one query for a namespace need it; the others must name their objects.
func (r *Rule) Separable(gr schema.GroupResource) error {
	label, err := r.resources.labelForResource(gr)
	if err != nil {
		return err
	}
	return r.query.sep.check([]string{label})
}

// LabelForResource returns the Prometheus label carrying object names of gr, with which the
// caller maps result samples back to objects.
func (r *Rule) LabelForResource(gr schema.GroupResource) (string, error) {
	return r.resources.labelForResource(gr)
}
