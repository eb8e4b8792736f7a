package prometheus

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// minScanBuffer is the initial size of a scanner's buffer; it grows only for a single token
// (a label value, say) that does not fit.
const minScanBuffer = 32 << 10

// maxDepth bounds how deeply objects and arrays may nest, as encoding/json bounds it: deeper
// input is an error instead of a recursion that grows the stack without limit.
const maxDepth = 10000

// errSyntax marks a response body that is not the JSON Prometheus writes.
var errSyntax = errors.New("malformed JSON")

// scanner reads JSON tokens straight from a stream through a fixed buffer, so that a response is
// decoded without holding its whole body. A byte slice it returns stays valid only until its
// next call.
type scanner struct {
	r        io.Reader
	buf      []byte
	pos, end int
	consumed int64  // bytes dropped from buf before pos, for error offsets
	rerr     error  // the reader's error once it has failed or ended
	depth    int    // objects and arrays open
	scratch  []byte // unescaped strings
	key      []byte // object keys that must outlive a read
	name     []byte // label names while their value is read
}

func newScanner(r io.Reader, buf []byte) *scanner {
	if cap(buf) < minScanBuffer {
		buf = make([]byte, minScanBuffer)
	}
	return &scanner{r: r, buf: buf[:cap(buf)]}
}

// more reads more input after buf[pos:end], moving that unread part to the front of buf (or
// into a larger buf when it fills buf); it reports false at the end of the input.
func (s *scanner) more() bool {
	if s.rerr != nil {
		return false
	}
	if s.pos > 0 {
		s.consumed += int64(s.pos)
		s.end = copy(s.buf, s.buf[s.pos:s.end])
		s.pos = 0
	}
	if s.end == len(s.buf) {
		grown := make([]byte, 2*len(s.buf))
		copy(grown, s.buf[:s.end])
		s.buf = grown
	}
	for {
		n, err := s.r.Read(s.buf[s.end:])
		s.end += n
		if err != nil {
			s.rerr = err
		}
		if n > 0 {
			return true
		}
		if err != nil {
			return false
		}
	}
}

// fail describes a syntax error at the current offset; a failed read is returned as is.
func (s *scanner) fail(format string, args ...any) error {
	if s.rerr != nil && !errors.Is(s.rerr, io.EOF) {
		return fmt.Errorf("read response: %w", s.rerr)
	}
	return fmt.Errorf("%w at byte %d: %s", errSyntax, s.consumed+int64(s.pos), fmt.Sprintf(format, args...))
}

// peek skips white space and returns the next byte without consuming it; ok is false at the end.
func (s *scanner) peek() (byte, bool) {
	for {
		for s.pos < s.end {
			switch c := s.buf[s.pos]; c {
			case ' ', '\t', '\n', '\r':
				s.pos++
			default:
				return c, true
			}
		}
		if !s.more() {
			return 0, false
		}
	}
}

// expect consumes the byte c, after white space.
func (s *scanner) expect(c byte) error {
	got, ok := s.peek()
	if !ok {
		return s.fail("unexpected end of input, want %q", c)
	}
	if got != c {
		return s.fail("got %q, want %q", got, c)
	}
	s.pos++
	return nil
}

// str reads a string and returns its unescaped bytes. A string with escapes, bytes that JSON
// forbids unescaped (control characters) or invalid UTF-8 goes through encoding/json, so that it
// is rejected or decoded (invalid UTF-8 as U+FFFD) exactly as encoding/json would.
func (s *scanner) str() ([]byte, error) {
	if err := s.expect('"'); err != nil {
		return nil, err
	}
	special, nonASCII := false, false
	for i := 0; ; {
		buf := s.buf[s.pos:s.end] // i counts from s.pos, which more may move
		for i < len(buf) && !stringSpecial(buf[i]) {
			i++
		}
		if i >= len(buf) {
			if !s.more() {
				return nil, s.fail("unterminated string")
			}
			continue
		}
		switch c := buf[i]; {
		case c == '"':
			raw := buf[:i]
			s.pos += i + 1
			if !special && (!nonASCII || utf8.Valid(raw)) {
				return raw, nil
			}
			return s.unescape(raw)
		case c == '\\':
			special = true
			i += 2 // the escaped byte too; a \u's hex digits are plain bytes
		case c < 0x20:
			special = true
			i++
		default:
			nonASCII = true
			i++
		}
	}
}

// stringSpecial reports whether a string byte needs a look: its end, an escape, a control
// character or a byte of a multi-byte character.
func stringSpecial(c byte) bool { return c == '"' || c == '\\' || c < 0x20 || c >= utf8.RuneSelf }

// unescape decodes a string with escapes (rare in label values) or other special bytes through
// encoding/json.
func (s *scanner) unescape(raw []byte) ([]byte, error) {
	s.scratch = append(append(append(s.scratch[:0], '"'), raw...), '"')
	var v string
	if err := json.Unmarshal(s.scratch, &v); err != nil {
		return nil, s.fail("bad string: %v", err)
	}
	s.scratch = append(s.scratch[:0], v...)
	return s.scratch, nil
}

// number reads a number's bytes: a JSON number, as RFC 8259 defines it.
func (s *scanner) number() ([]byte, error) {
	if _, ok := s.peek(); !ok {
		return nil, s.fail("unexpected end of input, want a number")
	}
	for i := 0; ; i++ {
		for s.pos+i >= s.end {
			if !s.more() {
				return s.takeNumber(i)
			}
		}
		switch s.buf[s.pos+i] {
		case '-', '+', '.', 'e', 'E', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		default:
			return s.takeNumber(i)
		}
	}
}

func (s *scanner) takeNumber(n int) ([]byte, error) {
	b := s.buf[s.pos : s.pos+n]
	if !validNumber(b) {
		if n == 0 {
			return nil, s.fail("want a number")
		}
		return nil, s.fail("malformed number %q", b)
	}
	s.pos += n
	return b, nil
}

// validNumber reports whether b is a JSON number: an optional minus, an integer part without
// leading zeros, an optional fraction and an optional exponent, each with at least one digit.
func validNumber(b []byte) bool {
	i, ok := 0, false
	if i < len(b) && b[i] == '-' {
		i++
	}
	if i, ok = integerPart(b, i); !ok {
		return false
	}
	if i < len(b) && b[i] == '.' {
		if i, ok = someDigits(b, i+1); !ok {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i, ok = someDigits(b, i); !ok {
			return false
		}
	}
	return i == len(b)
}

// integerPart reads a JSON number's integer part at i, 0 or digits not starting with 0, and
// returns the index after it.
func integerPart(b []byte, i int) (int, bool) {
	switch {
	case i < len(b) && b[i] == '0':
		return i + 1, true
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		return skipDigits(b, i), true
	}
	return i, false
}

// someDigits reads one or more digits at i and returns the index after them.
func someDigits(b []byte, i int) (int, bool) {
	j := skipDigits(b, i)
	return j, j > i
}

// skipDigits returns the index of the first byte at or after i that is not a digit.
func skipDigits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// literal consumes one of the words true, false and null.
func (s *scanner) literal() error {
	for _, word := range []string{"true", "false", "null"} {
		if s.hasPrefix(word) {
			s.pos += len(word)
			return nil
		}
	}
	return s.fail("want a value")
}

// hasPrefix reports whether the unread input starts with word.
func (s *scanner) hasPrefix(word string) bool {
	for s.end-s.pos < len(word) {
		if !s.more() {
			break
		}
	}
	return s.end-s.pos >= len(word) && string(s.buf[s.pos:s.pos+len(word)]) == word
}

// skip consumes one value of any kind.
func (s *scanner) skip() error {
	c, ok := s.peek()
	if !ok {
		return s.fail("unexpected end of input, want a value")
	}
	switch {
	case c == '"':
		_, err := s.str()
		return err
	case c == '{':
		return s.object(func([]byte) error { return s.skip() })
	case c == '[':
		return s.array(s.skip)
	case c == '-' || (c >= '0' && c <= '9'):
		_, err := s.number()
		return err
	}
	return s.literal()
}

// object reads an object, calling field with each key; field must consume the key's value, and
// may not keep key past its first read.
func (s *scanner) object(field func(key []byte) error) error {
	if err := s.open('{'); err != nil {
		return err
	}
	defer s.close()
	if c, ok := s.peek(); ok && c == '}' {
		s.pos++
		return nil
	}
	for {
		key, err := s.str()
		if err != nil {
			return err
		}
		// The key lies in buf: look past ':' only without reading more input.
		for s.pos < s.end && isSpace(s.buf[s.pos]) {
			s.pos++
		}
		if s.pos < s.end && s.buf[s.pos] == ':' {
			s.pos++
		} else {
			key = append(s.key[:0], key...)
			s.key = key
			if err := s.expect(':'); err != nil {
				return err
			}
		}
		if err := field(key); err != nil {
			return err
		}
		if done, err := s.next('}'); done || err != nil {
			return err
		}
	}
}

// array reads an array, calling elem for each element, which elem must consume.
func (s *scanner) array(elem func() error) error {
	if err := s.open('['); err != nil {
		return err
	}
	defer s.close()
	if c, ok := s.peek(); ok && c == ']' {
		s.pos++
		return nil
	}
	return s.elements(']', elem)
}

// open consumes c, the '{' or '[' that opens an object or array, counting the nesting; close
// ends it.
func (s *scanner) open(c byte) error {
	if err := s.expect(c); err != nil {
		return err
	}
	if s.depth++; s.depth > maxDepth {
		return s.fail("nested more than %d deep", maxDepth)
	}
	return nil
}

func (s *scanner) close() { s.depth-- }

// elements reads the elements of a non-empty array whose '[' has been read.
func (s *scanner) elements(closing byte, elem func() error) error {
	for {
		if err := elem(); err != nil {
			return err
		}
		if done, err := s.next(closing); done || err != nil {
			return err
		}
	}
}

// next consumes a ',' (more to come) or the closing byte (done).
func (s *scanner) next(closing byte) (bool, error) {
	c, ok := s.peek()
	switch {
	case !ok:
		return false, s.fail("unexpected end of input, want ',' or %q", closing)
	case c == ',':
		s.pos++
		return false, nil
	case c == closing:
		s.pos++
		return true, nil
	}
	return false, s.fail("got %q, want ',' or %q", c, closing)
}

// finish checks that nothing but white space follows the document.
func (s *scanner) finish() error {
	if c, ok := s.peek(); ok {
		return s.fail("got %q after the end of the document", c)
	}
	if s.rerr != nil && !errors.Is(s.rerr, io.EOF) {
		return fmt.Errorf("read response: %w", s.rerr)
	}
	return nil
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
