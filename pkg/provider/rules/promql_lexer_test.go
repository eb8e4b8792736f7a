package rules

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// The fuzz targets check rendered queries with this small PromQL lexer of the test's own,
// written independently of the code under test, instead of prometheus/prometheus's
// promql/parser: that parser would pull the whole Prometheus server module into go.mod for a
// test, and the property checked here (which tokens a query has, and which matchers its
// selectors carry) needs only the lexical grammar of PromQL. Anything the lexer does not
// know, such as a `#` comment or an unterminated string, is an error: a hostile value that
// escaped its string would show up as one.

// tokenKind is the class of a PromQL token.
type tokenKind byte

const (
	tokIdent  tokenKind = 'i' // metric, label or function name, keyword
	tokNumber tokenKind = 'n' // number or duration
	tokString tokenKind = 's' // string literal; text is the decoded value
	tokPunct  tokenKind = 'p' // operator or bracket
)

type token struct {
	kind tokenKind
	text string
}

// punctuation, longest first.
var punctuation = []string{"=~", "!~", "!=", "==", ">=", "<=", "{", "}", "(", ")", "[", "]", ",", "=", "+", "-", "*", "/", "%", "^", "<", ">", "@", ":"}

// lexPromQL splits q into tokens.
func lexPromQL(q string) ([]token, error) {
	var out []token
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '_' || isLetter(c):
			j := i + 1
			for j < len(q) && (isLetter(q[j]) || isDigit(q[j]) || q[j] == '_' || q[j] == ':') {
				j++
			}
			out = append(out, token{tokIdent, q[i:j]})
			i = j
		case isDigit(c) || c == '.' && i+1 < len(q) && isDigit(q[i+1]):
			j := i + 1
			for j < len(q) && (isDigit(q[j]) || isLetter(q[j]) || q[j] == '.') {
				j++
			}
			out = append(out, token{tokNumber, q[i:j]})
			i = j
		case c == '"' || c == '`':
			j, value, err := lexString(q, i)
			if err != nil {
				return nil, err
			}
			out = append(out, token{tokString, value})
			i = j
		default:
			p := punctAt(q[i:])
			if p == "" {
				return nil, fmt.Errorf("unexpected %q at byte %d of %q", c, i, q)
			}
			out = append(out, token{tokPunct, p})
			i += len(p)
		}
	}
	return out, nil
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }

func punctAt(s string) string {
	for _, p := range punctuation {
		if strings.HasPrefix(s, p) {
			return p
		}
	}
	return ""
}

// lexString reads the string literal starting at q[i] and returns the index after it and its
// decoded value. Double-quoted strings use Go escapes (as PromQL does); raw strings have none.
func lexString(q string, i int) (int, string, error) {
	quote := q[i]
	for j := i + 1; j < len(q); j++ {
		switch {
		case q[j] == '\\' && quote == '"':
			j++
		case q[j] == '\n' && quote == '"':
			return 0, "", fmt.Errorf("newline in string at byte %d of %q", j, q)
		case q[j] == quote:
			value, err := strconv.Unquote(q[i : j+1])
			if err != nil {
				return 0, "", fmt.Errorf("string %s does not unquote: %w", q[i:j+1], err)
			}
			return j + 1, value, nil
		}
	}
	return 0, "", fmt.Errorf("unterminated string at byte %d of %q", i, q)
}

// promMatcher is one label matcher of a selector, as the lexer read it.
type promMatcher struct{ label, op, value string }

// selectorMatchers returns the matchers of each `{…}` selector in tokens, failing on a
// selector that is not a comma-separated list of label, operator and string.
func selectorMatchers(tokens []token) ([][]promMatcher, error) {
	var out [][]promMatcher
	for i := 0; i < len(tokens); i++ {
		if tokens[i] != (token{tokPunct, "{"}) {
			continue
		}
		out = append(out, []promMatcher{})
		for i++; i < len(tokens) && tokens[i] != (token{tokPunct, "}"}); i++ {
			if i+2 >= len(tokens) || tokens[i].kind != tokIdent || tokens[i+1].kind != tokPunct || tokens[i+2].kind != tokString {
				return nil, fmt.Errorf("malformed matcher at token %d: %v", i, tokens[i:])
			}
			switch tokens[i+1].text {
			case "=", "!=", "=~", "!~":
			default:
				return nil, fmt.Errorf("matcher operator %q", tokens[i+1].text)
			}
			out[len(out)-1] = append(out[len(out)-1], promMatcher{tokens[i].text, tokens[i+1].text, tokens[i+2].text})
			i += 3
			if i < len(tokens) && tokens[i] == (token{tokPunct, "}"}) {
				break
			}
			if i >= len(tokens) || tokens[i] != (token{tokPunct, ","}) {
				return nil, fmt.Errorf("expected , or } after a matcher at token %d", i)
			}
		}
		if i >= len(tokens) {
			return nil, fmt.Errorf("unclosed selector")
		}
	}
	return out, nil
}

// shape is the token sequence with string literals blanked: two queries with the same shape
// differ only in the values inside their strings.
func shape(tokens []token) string {
	var b strings.Builder
	for _, t := range tokens {
		if t.kind == tokString {
			b.WriteString(`"…" `)
			continue
		}
		b.WriteString(t.text)
		b.WriteByte(' ')
	}
	return b.String()
}

// intent is what a matcher on one label must select: exactly one value with op, or (for
// regex operators) exactly the set values.
type intent struct {
	op     string
	values []string
}

// checkMatchers compares the matchers the lexer read with the intended ones: the same labels,
// each once, with the same operator; equality matchers carry exactly the value, regex matchers
// (anchored, as Prometheus anchors them) select exactly the intended values among probes.
func checkMatchers(got []promMatcher, want map[string]intent) error {
	seen := map[string]bool{}
	for _, m := range got {
		w, ok := want[m.label]
		if !ok {
			return fmt.Errorf("matcher on unrequested label %q", m.label)
		}
		if seen[m.label] {
			return fmt.Errorf("two matchers on label %q", m.label)
		}
		seen[m.label] = true
		if m.op != w.op {
			return fmt.Errorf("label %q operator %q, want %q", m.label, m.op, w.op)
		}
		if m.op == "=" || m.op == "!=" {
			if len(w.values) != 1 || m.value != w.values[0] {
				return fmt.Errorf("label %q value %q, want %q", m.label, m.value, w.values)
			}
			continue
		}
		re, err := regexp.Compile("^(?s:" + m.value + ")$")
		if err != nil {
			return fmt.Errorf("label %q regex %q does not compile: %w", m.label, m.value, err)
		}
		in := map[string]bool{}
		for _, v := range w.values {
			in[v] = true
		}
		for _, probe := range append([]string{"", "x", ".*", "a|b", "\n"}, w.values...) {
			if re.MatchString(probe) != in[probe] {
				return fmt.Errorf("label %q regex %q matches %q = %v, want %v", m.label, m.value, probe, !in[probe], in[probe])
			}
		}
		// Every intended value is matched whole, never as a prefix of another.
		for _, v := range w.values {
			for _, probe := range []string{v + "x", "x" + v} {
				if re.MatchString(probe) && !in[probe] {
					return fmt.Errorf("label %q regex %q also matches %q", m.label, m.value, probe)
				}
			}
		}
	}
	for label := range want {
		if !seen[label] {
			return fmt.Errorf("no matcher on requested label %q", label)
		}
	}
	return nil
}
