package pyfmt

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// JSONError returns the error json.loads raises for text, worded as
// Python's JSONDecodeError ("Expecting value: line 1 column 10 (char
// 9)"), or nil when json.loads accepts it. text must be valid UTF-8
// (decoding bytes is the codec's step, and its errors are the codec's);
// positions count characters, as Python's do. NaN and Infinity are
// accepted, as Python accepts them. Nesting is not limited here: callers
// bound it before they ask.
func JSONError(text string) error {
	if !utf8.ValidString(text) {
		return fmt.Errorf("pyfmt: JSONError needs UTF-8 text")
	}
	s := []rune(text)
	if len(s) > 0 && s[0] == '\ufeff' {
		return decodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", s, 0)
	}
	p := &scanner{s: s}
	end, err := p.value(p.skipSpace(0))
	if err != nil {
		return err
	}
	if end = p.skipSpace(end); end != len(s) {
		return decodeError("Extra data", s, end)
	}
	return nil
}

// decodeError is JSONDecodeError(msg, doc, pos): the line and column of
// pos, counted as Python counts them.
func decodeError(msg string, s []rune, pos int) error {
	line, lastNL := 1, -1
	for i := 0; i < pos && i < len(s); i++ {
		if s[i] == '\n' {
			line++
			lastNL = i
		}
	}
	return fmt.Errorf("%s: line %d column %d (char %d)", msg, line, pos-lastNL, pos)
}

// scanner follows CPython's C scanner (Modules/_json.c) step by step, so
// that each error names the message and the position it names.
type scanner struct{ s []rune }

func isJSONSpace(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' }

func (p *scanner) skipSpace(i int) int {
	for i < len(p.s) && isJSONSpace(p.s[i]) {
		i++
	}
	return i
}

// has reports whether word starts at i.
func (p *scanner) has(i int, word string) bool {
	for _, r := range word {
		if i >= len(p.s) || p.s[i] != r {
			return false
		}
		i++
	}
	return true
}

// value scans one JSON value starting exactly at i and returns the index
// after it. A position where no value starts is "Expecting value" there
// (the scanner's StopIteration, which every caller lets through).
func (p *scanner) value(i int) (int, error) {
	if i >= len(p.s) {
		return 0, decodeError("Expecting value", p.s, i)
	}
	switch c := p.s[i]; {
	case c == '"':
		return p.str(i + 1)
	case c == '{':
		return p.object(i + 1)
	case c == '[':
		return p.array(i + 1)
	case p.has(i, "null"), p.has(i, "true"):
		return i + 4, nil
	case p.has(i, "false"):
		return i + 5, nil
	case p.has(i, "NaN"):
		return i + 3, nil
	case p.has(i, "Infinity"):
		return i + 8, nil
	case p.has(i, "-Infinity"):
		return i + 9, nil
	}
	if end, ok := p.number(i); ok {
		return end, nil
	}
	return 0, decodeError("Expecting value", p.s, i)
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' }

// number matches a JSON number at i: an integer part without leading
// zeros, then a fraction only if a digit follows the point, then an
// exponent only if it has digits (else the scan backs off before 'e').
func (p *scanner) number(i int) (int, bool) {
	s, n := p.s, len(p.s)
	if s[i] == '-' {
		if i++; i >= n {
			return 0, false
		}
	}
	switch {
	case s[i] >= '1' && s[i] <= '9':
		for i++; i < n && isDigit(s[i]); i++ {
		}
	case s[i] == '0':
		i++
	default:
		return 0, false
	}
	if i+1 < n && s[i] == '.' && isDigit(s[i+1]) {
		for i += 2; i < n && isDigit(s[i]); i++ {
		}
	}
	if i+1 < n && (s[i] == 'e' || s[i] == 'E') {
		start := i
		i++
		if i+1 < n && (s[i] == '-' || s[i] == '+') {
			i++
		}
		for ; i < n && isDigit(s[i]); i++ {
		}
		if !isDigit(s[i-1]) {
			i = start
		}
	}
	return i, true
}

// str scans a string whose opening quote is at begin-1.
func (p *scanner) str(end int) (int, error) {
	s, n, begin := p.s, len(p.s), end-1
	for {
		next := end
		for ; next < n && s[next] != '"' && s[next] != '\\'; next++ {
			if s[next] <= 0x1f {
				return 0, decodeError("Invalid control character at", s, next)
			}
		}
		if next >= n {
			return 0, decodeError("Unterminated string starting at", s, begin)
		}
		if s[next] == '"' {
			return next + 1, nil
		}
		if next++; next == n {
			return 0, decodeError("Unterminated string starting at", s, begin)
		}
		if s[next] != 'u' {
			if !strings.ContainsRune(`"\/bfnrt`, s[next]) {
				return 0, decodeError(`Invalid \escape`, s, next-1)
			}
			end = next + 1
			continue
		}
		var err error
		if end, err = p.unicodeEscape(next + 1); err != nil {
			return 0, err
		}
	}
}

// unicodeEscape scans the four hex digits at next (after "\u") and, for a
// high surrogate, a second "\uXXXX" that may pair with it.
func (p *scanner) unicodeEscape(next int) (int, error) {
	s, n := p.s, len(p.s)
	end := next + 4
	if end >= n {
		return 0, decodeError(`Invalid \uXXXX escape`, s, next-1)
	}
	c, ok := hex4(s[next:end])
	if !ok {
		return 0, decodeError(`Invalid \uXXXX escape`, s, end-5)
	}
	if c >= 0xd800 && c <= 0xdbff && end+6 < n && s[end] == '\\' && s[end+1] == 'u' {
		c2, ok := hex4(s[end+2 : end+6])
		if !ok {
			return 0, decodeError(`Invalid \uXXXX escape`, s, end+1)
		}
		if c2 >= 0xdc00 && c2 <= 0xdfff {
			end += 6
		}
	}
	return end, nil
}

func hex4(rs []rune) (rune, bool) {
	var c rune
	for _, r := range rs {
		switch {
		case isDigit(r):
			c = c<<4 | (r - '0')
		case r >= 'a' && r <= 'f':
			c = c<<4 | (r - 'a' + 10)
		case r >= 'A' && r <= 'F':
			c = c<<4 | (r - 'A' + 10)
		default:
			return 0, false
		}
	}
	return c, true
}

// object scans the members after '{' at i-1.
func (p *scanner) object(i int) (int, error) {
	s, n := p.s, len(p.s)
	if i = p.skipSpace(i); i < n && s[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= n || s[i] != '"' {
			return 0, decodeError("Expecting property name enclosed in double quotes", s, i)
		}
		next, err := p.str(i + 1)
		if err != nil {
			return 0, err
		}
		if i = p.skipSpace(next); i >= n || s[i] != ':' {
			return 0, decodeError("Expecting ':' delimiter", s, i)
		}
		if i, err = p.value(p.skipSpace(i + 1)); err != nil {
			return 0, err
		}
		if i = p.skipSpace(i); i < n && s[i] == '}' {
			return i + 1, nil
		}
		if i >= n || s[i] != ',' {
			return 0, decodeError("Expecting ',' delimiter", s, i)
		}
		i = p.skipSpace(i + 1)
	}
}

// array scans the elements after '[' at i-1.
func (p *scanner) array(i int) (int, error) {
	s, n := p.s, len(p.s)
	if i = p.skipSpace(i); i < n && s[i] == ']' {
		return i + 1, nil
	}
	for {
		var err error
		if i, err = p.value(i); err != nil {
			return 0, err
		}
		if i = p.skipSpace(i); i < n && s[i] == ']' {
			return i + 1, nil
		}
		if i >= n || s[i] != ',' {
			return 0, decodeError("Expecting ',' delimiter", s, i)
		}
		i = p.skipSpace(i + 1)
	}
}
