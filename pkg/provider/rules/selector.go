package rules

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// matchOp is a PromQL label-matching operator.
type matchOp string

const (
	opEqual    matchOp = "="
	opNotEqual matchOp = "!="
	opRegex    matchOp = "=~"
	opNotRegex matchOp = "!~"
)

// seriesMatcher is one label matcher of a parsed series selector.
type seriesMatcher struct {
	label string
	op    matchOp
	value string
	re    *regexp.Regexp // anchored, for the regex operators
}

// matches reports whether a label value (empty when the label is absent) satisfies the matcher,
// with Prometheus semantics: regexes are fully anchored.
func (m seriesMatcher) matches(value string) bool {
	switch m.op {
	case opEqual:
		return value == m.value
	case opNotEqual:
		return value != m.value
	case opRegex:
		return m.re.MatchString(value)
	default:
		return !m.re.MatchString(value)
	}
}

// seriesSelector is a parsed Prometheus series selector such as `name{a="b",c=~"d.*"}`.
type seriesSelector []seriesMatcher

// matchesSeries reports whether a series (its name and labels) is selected.
func (s seriesSelector) matchesSeries(name string, labels map[string]string) bool {
	for _, m := range s {
		value := labels[m.label]
		if m.label == metricNameLabel {
			value = name
		}
		if !m.matches(value) {
			return false
		}
	}
	return true
}

const metricNameLabel = "__name__"

var errEmptySelector = errors.New("empty series selector")

// parseSeriesSelector parses the subset of PromQL that /api/v1/series accepts as match[]:
// an optional metric name followed by an optional brace-enclosed list of label matchers, with
// double-quoted, single-quoted or backtick strings. UTF-8 quoted names are not supported.
func parseSeriesSelector(input string) (seriesSelector, error) {
	p := &selectorParser{in: input}
	var sel seriesSelector
	p.skipSpace()
	if name := p.takeWhile(isMetricNameChar); name != "" {
		if !isValidMetricName(name) {
			return nil, fmt.Errorf("invalid metric name %q", name)
		}
		sel = append(sel, seriesMatcher{label: metricNameLabel, op: opEqual, value: name})
	}
	p.skipSpace()
	if p.peek() == '{' {
		p.pos++
		matchers, err := p.parseMatchers()
		if err != nil {
			return nil, err
		}
		sel = append(sel, matchers...)
	}
	p.skipSpace()
	if p.pos != len(p.in) {
		return nil, fmt.Errorf("unexpected %q at offset %d", p.in[p.pos:], p.pos)
	}
	if len(sel) == 0 {
		return nil, errEmptySelector
	}
	return sel, nil
}

type selectorParser struct {
	in  string
	pos int
}

func (p *selectorParser) peek() byte {
	if p.pos >= len(p.in) {
		return 0
	}
	return p.in[p.pos]
}

func (p *selectorParser) skipSpace() {
	for p.pos < len(p.in) && strings.IndexByte(" \t\r\n", p.in[p.pos]) >= 0 {
		p.pos++
	}
}

func (p *selectorParser) takeWhile(ok func(byte) bool) string {
	start := p.pos
	for p.pos < len(p.in) && ok(p.in[p.pos]) {
		p.pos++
	}
	return p.in[start:p.pos]
}

// parseMatchers parses `a="b", c!~"d" }` after the opening brace.
func (p *selectorParser) parseMatchers() ([]seriesMatcher, error) {
	var out []seriesMatcher
	for {
		p.skipSpace()
		if p.peek() == '}' {
			p.pos++
			return out, nil
		}
		m, err := p.parseMatcher()
		if err != nil {
			return nil, err
		}
		out = append(out, m)
		p.skipSpace()
		switch p.peek() {
		case ',':
			p.pos++
		case '}':
		default:
			return nil, fmt.Errorf("expected \",\" or \"}\" at offset %d", p.pos)
		}
	}
}

func (p *selectorParser) parseMatcher() (seriesMatcher, error) {
	label := p.takeWhile(isMetricNameChar)
	if !IsValidLabelName(label) {
		return seriesMatcher{}, fmt.Errorf("invalid label name %q at offset %d", label, p.pos)
	}
	p.skipSpace()
	var op matchOp
	for _, candidate := range []matchOp{opRegex, opNotRegex, opNotEqual, opEqual} {
		if strings.HasPrefix(p.in[p.pos:], string(candidate)) {
			op = candidate
			break
		}
	}
	if op == "" {
		return seriesMatcher{}, fmt.Errorf("expected a matching operator after %q at offset %d", label, p.pos)
	}
	p.pos += len(op)
	p.skipSpace()
	value, err := p.parseString()
	if err != nil {
		return seriesMatcher{}, fmt.Errorf("value of %q: %w", label, err)
	}
	m := seriesMatcher{label: label, op: op, value: value}
	if op == opRegex || op == opNotRegex {
		re, err := regexp.Compile("^(?s:" + value + ")$")
		if err != nil {
			return seriesMatcher{}, fmt.Errorf("regex of %q: %w", label, err)
		}
		m.re = re
	}
	return m, nil
}

// parseString reads a PromQL string literal and returns its unescaped value.
func (p *selectorParser) parseString() (string, error) {
	quote := p.peek()
	if quote != '"' && quote != '\'' && quote != '`' {
		return "", fmt.Errorf("expected a quoted string at offset %d", p.pos)
	}
	end := p.pos + 1
	for ; end < len(p.in) && p.in[end] != quote; end++ {
		if p.in[end] == '\\' && quote != '`' {
			end++
		}
	}
	if end >= len(p.in) {
		return "", fmt.Errorf("unterminated string at offset %d", p.pos)
	}
	lit := p.in[p.pos : end+1]
	p.pos = end + 1
	if quote == '\'' {
		// Re-quote as a Go double-quoted string: `\'` becomes `'`, a bare `"` gets escaped.
		lit = requoteSingle(lit[1 : len(lit)-1])
	}
	value, err := strconv.Unquote(lit)
	if err != nil {
		return "", fmt.Errorf("invalid string %s: %w", lit, err)
	}
	return value, nil
}

func isMetricNameChar(c byte) bool {
	return c == '_' || c == ':' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

// isValidMetricName reports whether s is a legacy Prometheus metric name, [a-zA-Z_:][a-zA-Z0-9_:]*.
func isValidMetricName(s string) bool {
	if s == "" || (s[0] >= '0' && s[0] <= '9') {
		return false
	}
	for i := range len(s) {
		if !isMetricNameChar(s[i]) {
			return false
		}
	}
	return true
}

// IsValidLabelName reports whether s is a legacy Prometheus label name, [a-zA-Z_][a-zA-Z0-9_]*.
func IsValidLabelName(s string) bool {
	return isValidMetricName(s) && !strings.Contains(s, ":")
}

// requoteSingle turns the body of a single-quoted PromQL string into a Go double-quoted literal.
func requoteSingle(body string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(body); i++ {
		switch c := body[i]; {
		case c == '\\' && i+1 < len(body) && body[i+1] == '\'':
			b.WriteByte('\'')
			i++
		case c == '\\' && i+1 < len(body):
			b.WriteByte(c)
			b.WriteByte(body[i+1])
			i++
		case c == '"':
			b.WriteString(`\"`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
