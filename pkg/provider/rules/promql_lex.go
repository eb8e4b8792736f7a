package rules

// The lexer of promql.go's parser.

import (
	"fmt"
	"strconv"
	"strings"
)

// pqToken is a lexical token; text is a string literal's decoded value.
type pqToken struct {
	kind byte // 'i' identifier, 'n' number or duration, 's' string, 'p' punctuation, 0 end
	text string
}

// pqPunctuation lists the punctuation tokens, two-character ones first.
var pqPunctuation = []string{"==", "!=", "<=", ">=", "=~", "!~", "(", ")", "{", "}", "[", "]", ",", "=", "<", ">",
	"+", "-", "*", "/", "%", "^", "@", ":"}

// lexPQ splits a query into tokens.
func lexPQ(q string) ([]pqToken, error) {
	var out []pqToken
	for i := 0; i < len(q); {
		if c := q[i]; c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			i++
			continue
		}
		t, next, err := lexToken(q, i)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
		i = next
	}
	return out, nil
}

// lexToken reads the token starting at i and returns it with the offset after it.
func lexToken(q string, i int) (pqToken, int, error) {
	switch c := q[i]; {
	case c == '_' || c == ':' || isASCIILetter(c):
		j := i + 1
		for j < len(q) && isMetricNameChar(q[j]) {
			j++
		}
		return pqToken{'i', q[i:j]}, j, nil
	case c >= '0' && c <= '9' || c == '.':
		j := lexNumberEnd(q, i)
		return pqToken{'n', q[i:j]}, j, nil
	case c == '"' || c == '\'' || c == '`':
		s, end, err := lexPQString(q, i)
		return pqToken{'s', s}, end, err
	}
	p := punctuationAt(q, i)
	if p == "" {
		return pqToken{}, 0, fmt.Errorf("unexpected %q at offset %d", q[i], i)
	}
	return pqToken{'p', p}, i + len(p), nil
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// lexNumberEnd returns the end of the number or duration starting at i (1, 1.5e-3, 0x1f, 1h30m).
func lexNumberEnd(q string, i int) int {
	j := i
	for j < len(q) {
		c := q[j]
		switch {
		case c >= '0' && c <= '9' || c == '.' || c == '_' || isASCIILetter(c):
			j++
		case (c == '+' || c == '-') && j > i && (q[j-1] == 'e' || q[j-1] == 'E') && !strings.ContainsAny(q[i:j], "xX"):
			j++
		default:
			return j
		}
	}
	return j
}

// lexPQString decodes the string literal starting at i and returns its value and end.
func lexPQString(q string, i int) (string, int, error) {
	quote := q[i]
	j := i + 1
	for ; j < len(q) && q[j] != quote; j++ {
		if q[j] == '\\' && quote != '`' {
			j++
		}
	}
	if j >= len(q) {
		return "", 0, fmt.Errorf("unterminated string at offset %d", i)
	}
	lit := q[i : j+1]
	if quote == '\'' {
		lit = requoteSingle(lit[1 : len(lit)-1])
	}
	s, err := strconv.Unquote(lit)
	if err != nil {
		return "", 0, fmt.Errorf("invalid string at offset %d: %w", i, err)
	}
	return s, j + 1, nil
}

func punctuationAt(q string, i int) string {
	for _, p := range pqPunctuation {
		if strings.HasPrefix(q[i:], p) {
			return p
		}
	}
	return ""
}
