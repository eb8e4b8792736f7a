package rules

import (
	"regexp"
	"sort"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Validate checks everything that does not need a ResourceMapper and returns every error, each
// naming its field path, e.g. `rules[2].name.matches: Invalid value: "(": error parsing regexp…`.
func (c *Config) Validate() field.ErrorList {
	backends, errs := validateBackends(c.Backends, field.NewPath("backends"))
	for i, r := range c.Rules {
		p := field.NewPath("rules").Index(i)
		errs = append(errs, validateRule(r, p)...)
		errs = append(errs, validateBackendRef(r.Backend, backends, p.Child("backend"))...)
	}
	for i, r := range c.ExternalRules {
		p := field.NewPath("externalRules").Index(i)
		errs = append(errs, validateRule(r, p)...)
		errs = append(errs, validateBackendRef(r.Backend, backends, p.Child("backend"))...)
	}
	if rr := c.ResourceRules; rr != nil {
		p := field.NewPath("resourceRules")
		errs = append(errs, validateResourceRules(rr, p)...)
		errs = append(errs, validateBackendRef(rr.Backend, backends, p.Child("backend"))...)
		if backends[rr.Backend].TenantFromNamespace {
			errs = append(errs, field.Invalid(p.Child("backend"), rr.Backend,
				"a backend with tenantFromNamespace cannot serve metrics.k8s.io: it lists the pods of every namespace in one query, and nodes have no namespace"))
		}
	}
	return errs
}

func validateRule(r DiscoveryRule, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if r.SeriesQuery == "" {
		errs = append(errs, field.Required(path.Child("seriesQuery"), "a Prometheus series selector"))
	} else if _, err := parseSeriesSelector(r.SeriesQuery); err != nil {
		errs = append(errs, field.Invalid(path.Child("seriesQuery"), r.SeriesQuery, err.Error()))
	}
	for i, f := range r.SeriesFilters {
		errs = append(errs, validateFilter(f, path.Child("seriesFilters").Index(i))...)
	}
	if _, _, err := compileName(r.Name); err != nil {
		p, v := path.Child("name", "matches"), r.Name.Matches
		if _, reErr := regexp.Compile(r.Name.Matches); reErr == nil {
			p, v = path.Child("name", "as"), r.Name.As
		}
		errs = append(errs, field.Invalid(p, v, err.Error()))
	}
	errs = append(errs, validateMapping(r.Resources, path.Child("resources"))...)
	errs = append(errs, validateQuery(r.MetricsQuery, path.Child("metricsQuery"))...)
	return errs
}

func validateFilter(f RegexFilter, path *field.Path) field.ErrorList {
	switch {
	case f.Is != "" && f.IsNot != "":
		return field.ErrorList{field.Invalid(path, f, "set only one of is and isNot")}
	case f.Is == "" && f.IsNot == "":
		return field.ErrorList{field.Required(path, "one of is and isNot")}
	case f.Is != "":
		if _, err := regexp.Compile(f.Is); err != nil {
			return field.ErrorList{field.Invalid(path.Child("is"), f.Is, err.Error())}
		}
	default:
		if _, err := regexp.Compile(f.IsNot); err != nil {
			return field.ErrorList{field.Invalid(path.Child("isNot"), f.IsNot, err.Error())}
		}
	}
	return nil
}

func validateMapping(m ResourceMapping, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if m.Template != "" {
		if _, _, err := parseResourceTemplate(m.Template); err != nil {
			errs = append(errs, field.Invalid(path.Child("template"), m.Template, err.Error()))
		}
	}
	labels := make([]string, 0, len(m.Overrides))
	for label := range m.Overrides {
		labels = append(labels, label)
	}
	sort.Strings(labels)
	for _, label := range labels {
		p := path.Child("overrides").Key(label)
		if err := checkLabelName(label); err != nil {
			errs = append(errs, field.Invalid(p, label, err.Error()))
		}
		if m.Overrides[label].Resource == "" {
			errs = append(errs, field.Required(p.Child("resource"), "a Kubernetes resource"))
		}
	}
	return errs
}

func validateQuery(text string, path *field.Path) field.ErrorList {
	if text == "" {
		return field.ErrorList{field.Required(path, "a PromQL template with << >> delimiters")}
	}
	if _, err := parseQueryTemplate(text); err != nil {
		return field.ErrorList{field.Invalid(path, text, err.Error())}
	}
	return nil
}

func validateResourceRules(rr *ResourceRules, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, res := range []struct {
		name string
		rule ResourceRule
	}{{"cpu", rr.CPU}, {"memory", rr.Memory}} {
		p := path.Child(res.name)
		errs = append(errs, validateQuery(res.rule.ContainerQuery, p.Child("containerQuery"))...)
		errs = append(errs, validateQuery(res.rule.NodeQuery, p.Child("nodeQuery"))...)
		errs = append(errs, validateMapping(res.rule.Resources, p.Child("resources"))...)
		if err := checkLabelName(res.rule.ContainerLabel); err != nil {
			errs = append(errs, field.Invalid(p.Child("containerLabel"), res.rule.ContainerLabel, err.Error()))
		}
	}
	if rr.Window <= 0 {
		errs = append(errs, field.Invalid(path.Child("window"), rr.Window.String(), "must be a positive duration such as 1m"))
	}
	return errs
}
