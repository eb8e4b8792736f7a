package rules

// Separability: may a rule's query for some objects be widened to every object of the resource
// (ObjectRequest.AllObjects, `label!=""`) and filtered by name in memory, without changing any
// object's value or error? That is what lets requests for different objects share one query.
//
// It holds when the template restricts to the requested objects only through .LabelMatchers,
// inside selectors, and every step from those selectors to the result keeps each object's
// series apart: per-series functions, aggregations by the object label, binary operators that
// match on it. It does not hold for .LabelValuesByName of the object label (prometheus-adapter
// fills it with the names; a widened request has none), for aggregations across objects
// (`sum(…)` without by, `scalar`, `absent`), for joins with on() that leave the object label
// out, or for anything the analysis does not understand. The decision is made once per rule and
// object label, on the template rendered with placeholders and parsed (promql.go).

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"text/template"
	"text/template/parse"
)

// ErrNotSeparable is returned for a request for every object (AllObjects) on a rule whose
// metricsQuery is not separable; such rules are queried with the requested names.
var ErrNotSeparable = errors.New("metricsQuery is not separable")

// Placeholders the template is rendered with for the analysis.
const (
	// restrictionLabel stands for .LabelMatchers: a selector carrying it is restricted to the
	// requested objects.
	restrictionLabel = "__podpilot_objects__"
	analysisSeries   = "podpilot_series"
	analysisValue    = "podpilot_value"
	// namesMarker stands for the object label's .LabelValuesByName when a request's names are
	// split (splitting): a selector matching it with = or =~ is restricted to the objects.
	namesMarker = "podpilot_object_names"
)

// placeholderFields are the template fields rendered as placeholders for the analysis; the
// analysis holds only if the template prints them and never tests or transforms them.
var placeholderFields = map[string]bool{"Series": true, "LabelMatchers": true, "LabelValuesByName": true}

// separability decides whether one metricsQuery template is separable, per object label.
type separability struct {
	tmpl *template.Template
	// why is set when the template uses a placeholder field in its logic: never separable.
	why string
	// valueKeys are the .LabelValuesByName keys the template prints.
	valueKeys map[string]bool
	// verdicts caches check's answer by group-by list (object label first).
	verdicts sync.Map
}

// verdict is one cached answer of separability.check.
type verdict struct{ err error }

// newSeparability inspects tmpl's use of the request fields.
func newSeparability(tmpl *template.Template) *separability {
	s := &separability{tmpl: tmpl, valueKeys: map[string]bool{}}
	if tmpl.Tree != nil {
		s.list(tmpl.Tree.Root, true)
	}
	return s
}

// check returns nil when the template's query for objects grouped by groupBy (the object label
// first) is separable, or an error wrapping ErrNotSeparable that says why.
func (s *separability) check(groupBy []string) error {
	if s.why != "" {
		return fmt.Errorf("%s: %w", s.why, ErrNotSeparable)
	}
	if s.valueKeys[groupBy[0]] {
		return fmt.Errorf("it reads the object names from .LabelValuesByName %q: %w", groupBy[0], ErrNotSeparable)
	}
	return s.cached(groupBy, false)
}

// checkSplit returns nil when the template's query for some objects grouped by groupBy (the
// object label first) may be split into queries for fewer objects each, whose answers together
// are the answer for all: the condition of check, except that the object names may also be
// read from .LabelValuesByName inside a selector's = or =~ matcher. Otherwise it returns an
// error wrapping ErrNotSeparable that says why.
func (s *separability) checkSplit(groupBy []string) error {
	if s.why != "" {
		return fmt.Errorf("%s: %w", s.why, ErrNotSeparable)
	}
	return s.cached(groupBy, true)
}

// cached returns analyze's verdict for groupBy and split, analyzing once.
func (s *separability) cached(groupBy []string, split bool) error {
	key := strings.Join(groupBy, ",")
	if split {
		key = "split:" + key
	}
	if v, ok := s.verdicts.Load(key); ok {
		return v.(verdict).err
	}
	err := s.analyze(groupBy, split)
	s.verdicts.Store(key, verdict{err: err})
	return err
}

// analyze renders the template with placeholders and the real group-by labels, parses it and
// follows the restricted selectors to the result. With split, the object label's
// .LabelValuesByName restricts too.
func (s *separability) analyze(groupBy []string, split bool) error {
	values := make(map[string]string, len(s.valueKeys))
	for k := range s.valueKeys {
		values[k] = analysisValue
		if split && k == groupBy[0] {
			values[k] = namesMarker
		}
	}
	q, err := renderQuery(s.tmpl, QueryArgs{
		Series:            analysisSeries,
		LabelMatchers:     restrictionLabel + `=""`,
		LabelValuesByName: values,
		GroupBy:           strings.Join(groupBy, ","),
		GroupBySlice:      groupBy,
	})
	if err != nil {
		return fmt.Errorf("it does not render: %w: %w", err, ErrNotSeparable)
	}
	root, err := parsePQ(q)
	if err != nil {
		return fmt.Errorf("podpilot cannot analyze %q: %w: %w", q, err, ErrNotSeparable)
	}
	if n := strings.Count(q, restrictionLabel); !split && n != countRestricted(root) {
		return fmt.Errorf("it uses .LabelMatchers outside a selector: %w", ErrNotSeparable)
	}
	if n := strings.Count(q, restrictionLabel) + strings.Count(q, namesMarker); split && n != countRestricted(root) {
		return fmt.Errorf("it uses .LabelMatchers, or the object names of .LabelValuesByName %q, outside a selector's = or =~ matcher: %w",
			groupBy[0], ErrNotSeparable)
	}
	if sh, why := dependenceOf(root, groupBy[0]); sh == acrossObjects {
		return fmt.Errorf("%s: %w", why, ErrNotSeparable)
	}
	return nil
}

// countRestricted counts the restricted selectors under n.
func countRestricted(n *pqNode) int {
	c := n.restrictions
	for _, a := range n.args {
		c += countRestricted(a)
	}
	return c
}

// fail records why the template is not separable (the first reason found).
func (s *separability) fail(why string) {
	if s.why == "" {
		s.why = why
	}
}

// list inspects a template list; rootDot is whether dot is the template data there.
func (s *separability) list(l *parse.ListNode, rootDot bool) {
	if l == nil {
		return
	}
	for _, n := range l.Nodes {
		switch n := n.(type) {
		case *parse.TextNode, *parse.CommentNode, *parse.BreakNode, *parse.ContinueNode:
		case *parse.ActionNode:
			if key, ok := printedField(n.Pipe, rootDot); ok {
				if key != "" {
					s.valueKeys[key] = true
				}
				continue
			}
			s.pipe(n.Pipe, rootDot)
		case *parse.IfNode:
			s.branch(&n.BranchNode, rootDot, rootDot)
		case *parse.RangeNode:
			s.branch(&n.BranchNode, rootDot, false)
		case *parse.WithNode:
			s.branch(&n.BranchNode, rootDot, false)
		default:
			s.fail("it calls another template")
		}
	}
}

// branch inspects an if, range or with: its pipeline, its body (where dot may change) and its
// else branch.
func (s *separability) branch(b *parse.BranchNode, rootDot, bodyRootDot bool) {
	s.pipe(b.Pipe, rootDot)
	s.list(b.List, bodyRootDot)
	s.list(b.ElseList, rootDot)
}

// pipe checks that a pipeline's arguments use no placeholder field.
func (s *separability) pipe(p *parse.PipeNode, rootDot bool) {
	if p == nil {
		return
	}
	for _, c := range p.Cmds {
		for _, a := range c.Args {
			s.arg(a, rootDot)
		}
	}
}

func (s *separability) arg(n parse.Node, rootDot bool) {
	switch n := n.(type) {
	case *parse.DotNode:
		if rootDot {
			s.fail("it passes the whole template data to a function")
		}
	case *parse.FieldNode, *parse.VariableNode:
		if path, ok := rootPath(n, rootDot); ok && (len(path) == 0 || placeholderFields[path[0]]) {
			s.fail(fmt.Sprintf("it uses .%s in template logic, not only printed", strings.Join(path, ".")))
		}
	case *parse.ChainNode:
		s.arg(n.Node, rootDot)
	case *parse.PipeNode:
		s.pipe(n, rootDot)
	}
}

// rootPath returns the field path of a field or variable node that reads the template data.
func rootPath(n parse.Node, rootDot bool) ([]string, bool) {
	switch n := n.(type) {
	case *parse.FieldNode:
		return n.Ident, rootDot
	case *parse.VariableNode:
		return n.Ident[1:], n.Ident[0] == "$"
	}
	return nil, false
}

// printedField reports whether an action only prints .Series, .LabelMatchers or one value of
// .LabelValuesByName, and for the last the key.
func printedField(p *parse.PipeNode, rootDot bool) (string, bool) {
	if len(p.Decl) > 0 || len(p.Cmds) != 1 {
		return "", false
	}
	switch args := p.Cmds[0].Args; len(args) {
	case 1:
		return printedPath(args[0], rootDot)
	case 3:
		return printedIndex(args, rootDot)
	}
	return "", false
}

// printedPath matches `.Series`, `.LabelMatchers` and `.LabelValuesByName.key`.
func printedPath(arg parse.Node, rootDot bool) (string, bool) {
	path, ok := rootPath(arg, rootDot)
	switch {
	case !ok:
	case len(path) == 1 && (path[0] == "Series" || path[0] == "LabelMatchers"):
		return "", true
	case len(path) == 2 && path[0] == "LabelValuesByName":
		return path[1], true
	}
	return "", false
}

// printedIndex matches `index .LabelValuesByName "key"`.
func printedIndex(args []parse.Node, rootDot bool) (string, bool) {
	fn, isIdent := args[0].(*parse.IdentifierNode)
	path, ok := rootPath(args[1], rootDot)
	key, isString := args[2].(*parse.StringNode)
	if isIdent && fn.Ident == "index" && ok && slices.Equal(path, []string{"LabelValuesByName"}) && isString {
		return key.Text, true
	}
	return "", false
}

// dependence is how a PromQL expression's result depends on the requested objects.
type dependence uint8

const (
	// independent does not depend on them.
	independent dependence = iota
	// perObject depends on them object by object: each object's series are the same whatever
	// other objects are requested.
	perObject
	// acrossObjects depends on them as a set.
	acrossObjects
)

// perSeriesFunctions map each input series to at most one output series with the same labels
// (but __name__), or group by every label but `le` (histogram_quantile).
var perSeriesFunctions = map[string]bool{
	"abs": true, "ceil": true, "floor": true, "round": true, "exp": true, "ln": true, "log2": true,
	"log10": true, "sqrt": true, "sgn": true, "clamp": true, "clamp_min": true, "clamp_max": true,
	"rate": true, "irate": true, "increase": true, "delta": true, "idelta": true, "deriv": true,
	"predict_linear": true, "resets": true, "changes": true, "timestamp": true,
	"avg_over_time": true, "min_over_time": true, "max_over_time": true, "sum_over_time": true,
	"count_over_time": true, "quantile_over_time": true, "stddev_over_time": true,
	"stdvar_over_time": true, "last_over_time": true, "present_over_time": true, "mad_over_time": true,
	"sort": true, "sort_desc": true, "sort_by_label": true, "sort_by_label_desc": true,
	"histogram_quantile": true, "histogram_count": true, "histogram_sum": true, "histogram_avg": true,
	"histogram_fraction": true, "histogram_stddev": true, "histogram_stdvar": true,
	"holt_winters": true, "double_exponential_smoothing": true,
	"acos": true, "acosh": true, "asin": true, "asinh": true, "atan": true, "atanh": true, "cos": true,
	"cosh": true, "sin": true, "sinh": true, "tan": true, "tanh": true, "deg": true, "rad": true,
	"day_of_month": true, "day_of_week": true, "day_of_year": true, "days_in_month": true, "hour": true,
	"minute": true, "month": true, "year": true,
}

// dependenceOf returns n's dependence for object label obj and, for acrossObjects, why.
func dependenceOf(n *pqNode, obj string) (dependence, string) {
	switch n.kind {
	case pqLiteral:
		return independent, ""
	case pqSelector:
		if n.restricted {
			return perObject, ""
		}
		return independent, ""
	case pqCall:
		return callDependence(n, obj)
	case pqAggregate:
		return aggregateDependence(n, obj)
	default:
		return binaryDependence(n, obj)
	}
}

// argsDependence is the most dependent dependence of args, with the first reason.
func argsDependence(args []*pqNode, obj string) (dependence, string) {
	out, why := independent, ""
	for _, a := range args {
		sh, w := dependenceOf(a, obj)
		if sh > out {
			out, why = sh, w
		}
	}
	return out, why
}

func callDependence(n *pqNode, obj string) (dependence, string) {
	sh, why := argsDependence(n.args, obj)
	if sh != perObject {
		return sh, why
	}
	switch {
	case n.name == "histogram_quantile" && obj == "le":
		return acrossObjects, "histogram_quantile() groups away the object label le"
	case perSeriesFunctions[n.name]:
		return perObject, ""
	case n.name == "label_replace" || n.name == "label_join":
		if len(n.args) < 2 || !n.args[1].str || n.args[1].name == obj {
			return acrossObjects, fmt.Sprintf("%s() may write the object label %q", n.name, obj)
		}
		return perObject, ""
	}
	return acrossObjects, fmt.Sprintf("%s() combines the requested objects", n.name)
}

func aggregateDependence(n *pqNode, obj string) (dependence, string) {
	if len(n.args) == 0 {
		return acrossObjects, fmt.Sprintf("%s() has no argument", n.name)
	}
	params, expr := n.args[:len(n.args)-1], n.args[len(n.args)-1]
	if sh, _ := argsDependence(params, obj); sh != independent {
		return acrossObjects, fmt.Sprintf("the parameter of %s() depends on the requested objects", n.name)
	}
	if n.name == "count_values" && (len(params) == 0 || !params[0].str || params[0].name == obj) {
		return acrossObjects, fmt.Sprintf("count_values() may write the object label %q", obj)
	}
	sh, why := dependenceOf(expr, obj)
	if sh != perObject {
		return sh, why
	}
	switch {
	case !n.grouped:
		return acrossObjects, fmt.Sprintf("%s() without by (%s) aggregates across the requested objects", n.name, obj)
	case slices.Contains(n.labels, obj) == n.exclude:
		return acrossObjects, fmt.Sprintf("%s() groups away the object label %q", n.name, obj)
	}
	return perObject, ""
}

func binaryDependence(n *pqNode, obj string) (dependence, string) {
	l, lwhy := dependenceOf(n.args[0], obj)
	r, rwhy := dependenceOf(n.args[1], obj)
	switch {
	case l == acrossObjects:
		return l, lwhy
	case r == acrossObjects:
		return r, rwhy
	case l == independent && r == independent:
		return independent, ""
	case !n.grouped || slices.Contains(n.labels, obj) != n.exclude:
		return perObject, "" // matched on the object label
	}
	return unmatchedDependence(n, l, r)
}

// unmatchedDependence is the dependence of a binary operator, with at least one operand per
// object, whose vector matching leaves the object label out.
func unmatchedDependence(n *pqNode, l, r dependence) (dependence, string) {
	switch {
	case (n.name == "and" || n.name == "unless") && l == perObject && r == independent:
		return perObject, "" // filters each object's series by something independent of the others
	case n.card == "group_left" && l == perObject && r == independent,
		n.card == "group_right" && r == perObject && l == independent:
		return perObject, "" // each object's series joined with the same other side
	}
	modifier := "on"
	if n.exclude {
		modifier = "ignoring"
	}
	return acrossObjects, fmt.Sprintf("%q %s(%s) matches across the requested objects", n.name, modifier, strings.Join(n.labels, ","))
}
