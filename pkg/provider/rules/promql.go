package rules

// A small PromQL parser for one purpose: deciding at compile time whether a metricsQuery is
// separable (separable.go). It builds a tree of the expression's structure (selectors,
// function calls, aggregations with their grouping, binary operators with their vector
// matching) and ignores what does not change that structure: range and subquery durations,
// offset and @ modifiers, number values. It is written for this package rather than taken from
// prometheus/prometheus's promql/parser because that module would raise the go directive and
// about twenty shared dependencies (grpc, otel, …) of the whole binary. Anything it does not
// understand is an error, and an error makes a rule not separable: podpilot then sends
// prometheus-adapter's own query, which is always right.

import (
	"fmt"
	"strings"
)

// pqKind is the kind of a parsed PromQL node.
type pqKind uint8

const (
	pqLiteral   pqKind = iota // a number or string
	pqSelector                // a vector selector, with or without a range
	pqCall                    // a function call
	pqAggregate               // an aggregation such as sum(…) by (…)
	pqBinary                  // a binary operator
)

// pqNode is one node of a parsed PromQL expression.
type pqNode struct {
	kind pqKind
	// name is the function or aggregation name, the binary operator, or a string literal's value.
	name string
	// str marks a string literal.
	str bool
	// restricted marks a selector that carries the object restriction (restrictionLabel, or
	// namesMarker matched positively when names are split); restrictions counts them.
	restricted   bool
	restrictions int
	// args are a call's or aggregation's arguments, or a binary operator's two operands.
	args []*pqNode
	// labels are an aggregation's by/without labels or a binary operator's on/ignoring labels.
	labels []string
	// grouped marks an aggregation with a by or without clause, or a binary operator with on
	// or ignoring; exclude marks without or ignoring.
	grouped, exclude bool
	// card is a binary operator's "group_left" or "group_right", empty for one-to-one.
	card string
}

// aggregations are PromQL's aggregation operators.
var aggregations = map[string]bool{
	"sum": true, "min": true, "max": true, "avg": true, "group": true, "stddev": true, "stdvar": true,
	"count": true, "count_values": true, "bottomk": true, "topk": true, "quantile": true,
	"limitk": true, "limit_ratio": true,
}

// binaryPrecedence gives each binary operator's precedence; ^ is right-associative.
var binaryPrecedence = map[string]int{
	"or": 1, "and": 2, "unless": 2,
	"==": 3, "!=": 3, "<": 3, "<=": 3, ">": 3, ">=": 3,
	"+": 4, "-": 4, "*": 5, "/": 5, "%": 5, "atan2": 5, "^": 6,
}

// pqParser is a recursive-descent parser over the tokens of one query.
type pqParser struct {
	toks []pqToken
	pos  int
}

// parsePQ parses a PromQL expression.
func parsePQ(q string) (*pqNode, error) {
	toks, err := lexPQ(q)
	if err != nil {
		return nil, err
	}
	p := &pqParser{toks: toks}
	n, err := p.expr(1)
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != 0 {
		return nil, fmt.Errorf("unexpected %q", t.text)
	}
	return n, nil
}

func (p *pqParser) peek() pqToken {
	if p.pos >= len(p.toks) {
		return pqToken{}
	}
	return p.toks[p.pos]
}

func (p *pqParser) peekAt(k int) pqToken {
	if p.pos+k >= len(p.toks) {
		return pqToken{}
	}
	return p.toks[p.pos+k]
}

func (p *pqParser) next() pqToken {
	t := p.peek()
	p.pos++
	return t
}

// is reports whether the next token is punctuation or an identifier with text s.
func (p *pqParser) is(s string) bool {
	t := p.peek()
	return (t.kind == 'p' || t.kind == 'i') && t.text == s
}

func (p *pqParser) expect(s string) error {
	if !p.is(s) {
		return fmt.Errorf("expected %q, got %q", s, p.peek().text)
	}
	p.pos++
	return nil
}

// expr parses binary operators of at least precedence minPrec (precedence climbing).
func (p *pqParser) expr(minPrec int) (*pqNode, error) {
	lhs, err := p.unary()
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		prec, ok := binaryPrecedence[t.text]
		if !ok || t.kind == 's' || t.kind == 'n' || prec < minPrec {
			return lhs, nil
		}
		p.pos++
		n := &pqNode{kind: pqBinary, name: t.text}
		if err := p.matching(n); err != nil {
			return nil, err
		}
		nextMin := prec + 1
		if t.text == "^" {
			nextMin = prec
		}
		rhs, err := p.expr(nextMin)
		if err != nil {
			return nil, err
		}
		n.args = []*pqNode{lhs, rhs}
		lhs = n
	}
}

// matching parses a binary operator's bool, on/ignoring and group_left/group_right modifiers.
func (p *pqParser) matching(n *pqNode) error {
	if p.is("bool") {
		p.pos++
	}
	if p.is("on") || p.is("ignoring") {
		n.grouped, n.exclude = true, p.next().text == "ignoring"
		labels, err := p.labelList()
		if err != nil {
			return err
		}
		n.labels = labels
	}
	if p.is("group_left") || p.is("group_right") {
		n.card = p.next().text
		if p.is("(") {
			if _, err := p.labelList(); err != nil {
				return err
			}
		}
	}
	return nil
}

// unary parses a signed operand and its postfix modifiers.
func (p *pqParser) unary() (*pqNode, error) {
	if p.is("-") || p.is("+") {
		p.pos++
		return p.unary()
	}
	n, err := p.primary()
	if err != nil {
		return nil, err
	}
	return n, p.postfix()
}

// postfix skips range and subquery brackets and offset and @ modifiers: they select time, not
// series.
func (p *pqParser) postfix() error {
	for {
		var err error
		switch {
		case p.is("["):
			err = p.skipBrackets()
		case p.is("offset"):
			err = p.offset()
		case p.is("@"):
			err = p.at()
		default:
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// offset skips `offset [-]duration`.
func (p *pqParser) offset() error {
	p.pos++
	if p.is("-") || p.is("+") {
		p.pos++
	}
	if p.next().kind != 'n' {
		return fmt.Errorf("offset without a duration")
	}
	return nil
}

// at skips `@ time`, `@ start()` or `@ end()`.
func (p *pqParser) at() error {
	p.pos++
	if p.is("-") || p.is("+") {
		p.pos++
	}
	t := p.next()
	switch {
	case t.kind == 'n':
		return nil
	case t.kind == 'i' && (t.text == "start" || t.text == "end"):
		if err := p.expect("("); err != nil {
			return err
		}
		return p.expect(")")
	}
	return fmt.Errorf("@ without a time")
}

// skipBrackets skips a [ … ] range or subquery.
func (p *pqParser) skipBrackets() error {
	p.pos++ // [
	for depth := 1; depth > 0; {
		switch t := p.next(); {
		case t.kind == 0:
			return fmt.Errorf("unterminated [")
		case t.kind == 'p' && t.text == "[":
			depth++
		case t.kind == 'p' && t.text == "]":
			depth--
		}
	}
	return nil
}

// primary parses a literal, a parenthesized expression, a selector, a call or an aggregation.
func (p *pqParser) primary() (*pqNode, error) {
	t := p.peek()
	switch {
	case t.kind == 'n':
		p.pos++
		return &pqNode{kind: pqLiteral}, nil
	case t.kind == 's':
		p.pos++
		return &pqNode{kind: pqLiteral, str: true, name: t.text}, nil
	case t.kind == 'p' && t.text == "(":
		p.pos++
		n, err := p.expr(1)
		if err != nil {
			return nil, err
		}
		return n, p.expect(")")
	case t.kind == 'p' && t.text == "{":
		return p.selector()
	case t.kind == 'i':
		return p.identPrimary()
	}
	return nil, fmt.Errorf("unexpected %q", t.text)
}

// identPrimary parses what starts with an identifier: an aggregation, a call, Inf or NaN, or a
// selector with a metric name.
func (p *pqParser) identPrimary() (*pqNode, error) {
	t, next := p.peek(), p.peekAt(1)
	switch {
	case aggregations[t.text] && (next.text == "(" || next.text == "by" || next.text == "without"):
		return p.aggregate()
	case next.kind == 'p' && next.text == "(":
		p.pos++
		args, err := p.args()
		if err != nil {
			return nil, err
		}
		return &pqNode{kind: pqCall, name: t.text, args: args}, nil
	case strings.EqualFold(t.text, "inf") || strings.EqualFold(t.text, "nan"):
		p.pos++
		return &pqNode{kind: pqLiteral}, nil
	}
	p.pos++ // the metric name
	if p.is("{") {
		return p.selector()
	}
	return &pqNode{kind: pqSelector}, nil
}

// aggregate parses `op [by|without (…)] (args) [by|without (…)]`.
func (p *pqParser) aggregate() (*pqNode, error) {
	n := &pqNode{kind: pqAggregate, name: p.next().text}
	if err := p.grouping(n); err != nil {
		return nil, err
	}
	args, err := p.args()
	if err != nil {
		return nil, err
	}
	n.args = args
	if !n.grouped {
		if err := p.grouping(n); err != nil {
			return nil, err
		}
	}
	return n, nil
}

// grouping parses an optional by or without clause into n.
func (p *pqParser) grouping(n *pqNode) error {
	if !p.is("by") && !p.is("without") {
		return nil
	}
	n.grouped, n.exclude = true, p.next().text == "without"
	labels, err := p.labelList()
	n.labels = labels
	return err
}

// args parses a parenthesized, comma-separated argument list.
func (p *pqParser) args() ([]*pqNode, error) {
	if err := p.expect("("); err != nil {
		return nil, err
	}
	var out []*pqNode
	for !p.is(")") {
		n, err := p.expr(1)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
		if !p.is(")") {
			if err := p.expect(","); err != nil {
				return nil, err
			}
		}
	}
	p.pos++
	return out, nil
}

// labelList parses `(a, "b", …)`, allowing a trailing comma.
func (p *pqParser) labelList() ([]string, error) {
	if err := p.expect("("); err != nil {
		return nil, err
	}
	var out []string
	for !p.is(")") {
		t := p.next()
		if t.kind != 'i' && t.kind != 's' {
			return nil, fmt.Errorf("expected a label name, got %q", t.text)
		}
		out = append(out, t.text)
		if !p.is(")") {
			if err := p.expect(","); err != nil {
				return nil, err
			}
		}
	}
	p.pos++
	return out, nil
}

// selector parses `{matchers}` after an optional metric name.
func (p *pqParser) selector() (*pqNode, error) {
	n := &pqNode{kind: pqSelector}
	p.pos++ // {
	for !p.is("}") {
		if err := p.matcher(n); err != nil {
			return nil, err
		}
		if !p.is("}") {
			if err := p.expect(","); err != nil {
				return nil, err
			}
		}
	}
	p.pos++
	return n, nil
}

// matchOps are PromQL's label matching operators.
var matchOps = map[string]bool{"=": true, "!=": true, "=~": true, "!~": true}

// matcher parses one label matcher, or a quoted metric name, into n.
func (p *pqParser) matcher(n *pqNode) error {
	t := p.next()
	if t.kind != 'i' && t.kind != 's' {
		return fmt.Errorf("expected a label matcher, got %q", t.text)
	}
	if t.kind == 's' && (p.is(",") || p.is("}")) {
		return nil // {"metric.name"}
	}
	op := p.next()
	if op.kind != 'p' || !matchOps[op.text] {
		return fmt.Errorf("expected a matching operator after %q", t.text)
	}
	v := p.next()
	if v.kind != 's' {
		return fmt.Errorf("expected a string after %q", t.text)
	}
	if t.text == restrictionLabel || (v.text == namesMarker && (op.text == "=" || op.text == "=~")) {
		n.restricted = true
		n.restrictions++
	}
	return nil
}
