package rules

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"text/template"
)

var (
	// ErrEmptyQuery is returned when a metricsQuery template renders to nothing.
	ErrEmptyQuery = errors.New("metrics query template rendered an empty query")
	// ErrQueryTooLarge is returned when a rendered query is longer than Limits.MaxQueryBytes:
	// a metric label selector too large, or too many object names for a rule that is not
	// separable. The server answers 400 Bad Request; the autoscaler holds the replicas.
	ErrQueryTooLarge = errors.New("query too large")
)

// QueryArgs are the fields a metricsQuery template sees; they are prometheus-adapter's.
type QueryArgs struct {
	// Series is the Prometheus series name.
	Series string
	// LabelMatchers is the comma-separated list of safe label matchers: the metric label
	// selector, then the namespace, then the object names, e.g. `namespace="ns",pod=~"a|b"`.
	LabelMatchers string
	// LabelValuesByName maps each matched label to its values as one regex alternation
	// (regex-escaped, joined with "|") that is also escaped for a double-quoted PromQL string,
	// so it is safe to splice inside `label=~"…"`. Exists/does-not-exist map to "".
	LabelValuesByName map[string]string
	// GroupBy is the comma-separated group-by label list: the resource label (and, for
	// container queries, the container label); empty for external metrics.
	GroupBy string
	// GroupBySlice is GroupBy as a slice.
	GroupBySlice []string
}

// parseQueryTemplate parses a metricsQuery template with the `<<` `>>` delimiters and dry-runs
// it with sample arguments, so that unknown fields fail at load time, not per request.
func parseQueryTemplate(text string) (*template.Template, error) {
	if strings.TrimSpace(text) == "" {
		return nil, ErrEmptyQuery
	}
	tmpl, err := template.New("metrics-query").Delims("<<", ">>").Parse(text)
	if err != nil {
		return nil, err
	}
	sample := QueryArgs{
		Series:            "sample_series",
		LabelMatchers:     `namespace="ns",pod="p"`,
		LabelValuesByName: map[string]string{"namespace": "ns", "pod": "p"},
		GroupBy:           "pod",
		GroupBySlice:      []string{"pod"},
	}
	if _, err := renderQuery(tmpl, sample); err != nil {
		return nil, err
	}
	return tmpl, nil
}

// compiledQuery is a compiled metricsQuery: its template, whether it is separable, and the
// limit on the size of what it renders.
type compiledQuery struct {
	tmpl *template.Template
	// sep decides whether requests for every object may use it; nil for podpilot's own
	// templates, which are not checked.
	sep      *separability
	maxBytes int
}

// compileQuery parses a rule's metricsQuery (or resource query) template.
func compileQuery(text string, limits Limits) (*compiledQuery, error) {
	tmpl, err := parseQueryTemplate(text)
	if err != nil {
		return nil, err
	}
	return &compiledQuery{tmpl: tmpl, sep: newSeparability(tmpl), maxBytes: limits.maxQueryBytes()}, nil
}

// render renders the query for args and checks its size.
func (c *compiledQuery) render(args QueryArgs) (string, error) {
	q, err := renderQuery(c.tmpl, args)
	if err != nil {
		return "", err
	}
	if len(q) > c.maxBytes {
		return "", fmt.Errorf("the query is %d bytes, more than the limit of %d (--metrics-max-query-bytes): %w",
			len(q), c.maxBytes, ErrQueryTooLarge)
	}
	return q, nil
}

// renderQuery executes a compiled metricsQuery template.
func renderQuery(tmpl *template.Template, args QueryArgs) (string, error) {
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, args); err != nil {
		return "", err
	}
	if strings.TrimSpace(buf.String()) == "" {
		return "", ErrEmptyQuery
	}
	return buf.String(), nil
}

// queryArgs assembles the template arguments from safe matchers and the group-by labels.
func queryArgs(series string, ms []Matcher, groupBy []string) QueryArgs {
	values := make(map[string]string, len(ms))
	for _, m := range ms {
		v := m.Value
		if m.Op == string(opEqual) || m.Op == string(opNotEqual) {
			v = RegexAlternation([]string{v})
		}
		values[m.Label] = quoteInner(v)
	}
	if groupBy == nil {
		groupBy = []string{}
	}
	return QueryArgs{
		Series:            series,
		LabelMatchers:     joinMatchers(ms),
		LabelValuesByName: values,
		GroupBy:           strings.Join(groupBy, ","),
		GroupBySlice:      groupBy,
	}
}

// quoteInner escapes s for the inside of a double-quoted PromQL string.
func quoteInner(s string) string {
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}

// checkSeriesName rejects series names that are not legacy Prometheus metric names; the series
// name is spliced into the query verbatim.
func checkSeriesName(name string) error {
	if !isValidMetricName(name) {
		return fmt.Errorf("series %q: %w", name, ErrInvalidSeriesName)
	}
	return nil
}

// ErrInvalidSeriesName is returned for a series name that is not a legacy Prometheus metric name.
var ErrInvalidSeriesName = errors.New("invalid Prometheus series name")
