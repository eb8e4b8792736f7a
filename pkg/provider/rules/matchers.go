package rules

// Escaping and chunking policy.
//
// Everything a request carries (label names and values from the metric label selector, the
// namespace, object names) reaches PromQL only through this file:
//   - label names must be legacy Prometheus names ([a-zA-Z_][a-zA-Z0-9_]*) and must not be
//     reserved (leading "__"), otherwise ErrInvalidLabelName;
//   - values must be valid UTF-8 (ErrInvalidValue) and are written as double-quoted PromQL strings
//     with strconv.Quote, which PromQL unquotes with strconv.Unquote, so quotes, backslashes,
//     newlines and any unicode round-trip and cannot close the string;
//   - values used in a regex (in, notin, several object names) are first escaped with
//     regexp.QuoteMeta and joined with "|"; PromQL anchors regexes, so `=~"a|b"` is an exact
//     match on a or b. Unlike prometheus-adapter, a value is never a regex pass-through.
//
// Long name lists: the object-name matcher grows with the number of names. For a separable
// rule, callers keep each query's name matcher under MaxNamesMatcherBytes (8 KiB): past it (see
// NamesMatcherBytes), a request sets ObjectRequest.AllObjects, which matches `label!=""` and
// leaves the filtering by name to the caller; that keeps the query constant-size for any
// namespace. A request that must name its objects is split into queries within the limit by
// QueryChunks (split.go).

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// MaxNamesMatcherBytes is the chunk size policy: the most bytes of object-name matcher value
// (escaped, joined with "|") a caller should put in one query.
const MaxNamesMatcherBytes = 8 << 10

var (
	// ErrUnsupportedOperator is returned for label selector operators PromQL cannot express
	// (gt, lt); the server answers 400 Bad Request.
	ErrUnsupportedOperator = errors.New("unsupported label selector operator")
	// ErrInvalidLabelName is returned for a label name that is not a legacy Prometheus label name
	// or that is reserved (starts with "__").
	ErrInvalidLabelName = errors.New("invalid Prometheus label name")
	// ErrInvalidValue is returned for a label value or object name that is not valid UTF-8.
	ErrInvalidValue = errors.New("invalid label value")
	// ErrMalformedRequirement is returned for a requirement whose values do not fit its operator.
	ErrMalformedRequirement = errors.New("malformed label selector requirement")
)

// Matcher is one PromQL label matcher; String renders it safely.
type Matcher struct {
	// Label is the label name, a valid legacy Prometheus label name.
	Label string
	// Op is one of "=", "!=", "=~", "!~".
	Op string
	// Value is the unescaped value (already regex-escaped for the regex operators).
	Value string
}

// String renders the matcher as `label<op>"value"` with the value quoted for PromQL.
func (m Matcher) String() string {
	return m.Label + m.Op + strconv.Quote(m.Value)
}

// joinMatchers renders matchers comma-separated, as in prometheus-adapter's LabelMatchers.
func joinMatchers(ms []Matcher) string {
	parts := make([]string, len(ms))
	for i, m := range ms {
		parts[i] = m.String()
	}
	return strings.Join(parts, ",")
}

// SelectorMatchers converts a Kubernetes label selector into PromQL matchers: `=`/`==` → `=`,
// `!=` → `!=`, `in` → `=~`, `notin` → `!~` (values regex-escaped), exists → `!=""` and
// does-not-exist → `=""`. gt and lt fail with ErrUnsupportedOperator. A nil selector yields none.
func SelectorMatchers(sel labels.Selector) ([]Matcher, error) {
	if sel == nil {
		return nil, nil
	}
	reqs, selectable := sel.Requirements()
	if !selectable {
		return nil, fmt.Errorf("selector %q selects nothing: %w", sel.String(), ErrMalformedRequirement)
	}
	out := make([]Matcher, 0, len(reqs))
	for _, req := range reqs {
		m, err := requirementMatcher(req.Key(), req.Operator(), req.Values().List())
		if err != nil {
			return nil, fmt.Errorf("label selector requirement on %q: %w", req.Key(), err)
		}
		out = append(out, m)
	}
	return out, nil
}

func requirementMatcher(key string, op selection.Operator, values []string) (Matcher, error) {
	if err := checkLabelName(key); err != nil {
		return Matcher{}, err
	}
	for _, v := range values {
		if !utf8.ValidString(v) {
			return Matcher{}, ErrInvalidValue
		}
	}
	switch op {
	case selection.Equals, selection.DoubleEquals, selection.NotEquals:
		if len(values) != 1 {
			return Matcher{}, fmt.Errorf("operator %q needs exactly one value: %w", op, ErrMalformedRequirement)
		}
		if op == selection.NotEquals {
			return Matcher{Label: key, Op: string(opNotEqual), Value: values[0]}, nil
		}
		return Matcher{Label: key, Op: string(opEqual), Value: values[0]}, nil
	case selection.In, selection.NotIn:
		if len(values) == 0 {
			return Matcher{}, fmt.Errorf("operator %q needs values: %w", op, ErrMalformedRequirement)
		}
		if op == selection.NotIn {
			return Matcher{Label: key, Op: string(opNotRegex), Value: RegexAlternation(values)}, nil
		}
		return Matcher{Label: key, Op: string(opRegex), Value: RegexAlternation(values)}, nil
	case selection.Exists, selection.DoesNotExist:
		if len(values) != 0 {
			return Matcher{}, fmt.Errorf("operator %q takes no values: %w", op, ErrMalformedRequirement)
		}
		if op == selection.Exists {
			return Matcher{Label: key, Op: string(opNotEqual)}, nil
		}
		return Matcher{Label: key, Op: string(opEqual)}, nil
	default:
		return Matcher{}, fmt.Errorf("operator %q: %w", op, ErrUnsupportedOperator)
	}
}

// checkLabelName rejects names that are not legacy Prometheus label names or are reserved.
func checkLabelName(name string) error {
	if !IsValidLabelName(name) || strings.HasPrefix(name, "__") {
		return fmt.Errorf("%q: %w", name, ErrInvalidLabelName)
	}
	return nil
}

// RegexAlternation returns a regex matching exactly the given values: each is escaped with
// regexp.QuoteMeta and they are joined with "|".
func RegexAlternation(values []string) string {
	quoted := make([]string, len(values))
	for i, v := range values {
		quoted[i] = regexp.QuoteMeta(v)
	}
	return strings.Join(quoted, "|")
}

// namesMatcher matches object names on a resource label: `=` for one name, `=~` for several
// and `!=""` (any object) when all is set.
func namesMatcher(label string, names []string, all bool) (Matcher, error) {
	if err := checkLabelName(label); err != nil {
		return Matcher{}, err
	}
	for _, n := range names {
		if !utf8.ValidString(n) {
			return Matcher{}, fmt.Errorf("object name: %w", ErrInvalidValue)
		}
	}
	switch {
	case all:
		return Matcher{Label: label, Op: string(opNotEqual)}, nil
	case len(names) == 0:
		return Matcher{}, ErrNoObjectNames
	case len(names) == 1:
		return Matcher{Label: label, Op: string(opEqual), Value: names[0]}, nil
	default:
		return Matcher{Label: label, Op: string(opRegex), Value: RegexAlternation(names)}, nil
	}
}

// patternMatcher matches object names on a resource label with the RE2 expression pattern, which
// PromQL anchors: the objects whose whole name matches.
func patternMatcher(label, pattern string) (Matcher, error) {
	if _, err := regexp.Compile("^(?:" + pattern + ")$"); err != nil || !utf8.ValidString(pattern) {
		return Matcher{}, fmt.Errorf("object name pattern %q: %w", pattern, ErrInvalidValue)
	}
	return Matcher{Label: label, Op: string(opRegex), Value: pattern}, nil
}

// NamesMatcherBytes returns the size in bytes of the quoted object-name matcher value that a
// query for these names carries; callers compare it with MaxNamesMatcherBytes.
func NamesMatcherBytes(names []string) int {
	if len(names) == 1 {
		return len(strconv.Quote(names[0]))
	}
	return len(strconv.Quote(RegexAlternation(names)))
}
