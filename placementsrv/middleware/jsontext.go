package middleware

import (
	"fmt"
	"unicode/utf8"

	"github.com/placement-syncd/placement-syncd/placementsrv/schema"
)

// checkJSONText rejects, before any decoding, what upstream cannot take
// from a body and encoding/json would quietly accept: bytes that are not
// UTF-8 (upstream decodes the body first and answers with Python's codec
// error) and nesting deeper than schema.MaxDepth (upstream's recursive
// decoder and error rendering fail on deep nesting; here it bounds the
// work and the size of an error message). It returns the offset of the
// first escaped lone surrogate (\ud800 with no low half), which
// encoding/json would store as U+FFFD, or -1; the caller reports it only
// once the document has parsed, so that a syntax error still comes first.
func checkJSONText(body []byte) (surrogate int, err error) {
	if !utf8.Valid(body) {
		return -1, utf8Error(body)
	}
	surrogate = -1
	depth, inString := 0, false
	for i := 0; i < len(body); i++ {
		c := body[i]
		if inString {
			switch c {
			case '"':
				inString = false
			case '\\':
				skip := 1 // the escaped character
				if i+1 < len(body) && body[i+1] == 'u' {
					var lone bool
					if skip, lone = surrogateEscape(body, i); lone && surrogate < 0 {
						surrogate = i
					}
				}
				i += skip
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '[', '{':
			if depth++; depth > schema.MaxDepth {
				return -1, fmt.Errorf("nesting deeper than %d levels at position %d", schema.MaxDepth, i)
			}
		case ']', '}':
			depth--
		}
	}
	return surrogate, nil
}

// surrogateEscape looks at the \uXXXX escape at body[i]. It returns how
// many bytes after body[i] the escape (a valid pair: both halves) spans,
// and whether it is a lone surrogate.
func surrogateEscape(body []byte, i int) (skip int, lone bool) {
	r, ok := hex4(body, i+2)
	switch {
	case !ok || r < 0xd800 || r > 0xdfff:
		return 1, false
	case r >= 0xdc00:
		return 5, true
	}
	if i+11 < len(body) && body[i+6] == '\\' && body[i+7] == 'u' {
		if lo, ok := hex4(body, i+8); ok && lo >= 0xdc00 && lo <= 0xdfff {
			return 11, false
		}
	}
	return 5, true
}

func hex4(b []byte, at int) (rune, bool) {
	if at+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[at : at+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// utf8Error words the first invalid sequence as Python's UTF-8 codec
// does: "'utf-8' codec can't decode byte 0xff in position 10: invalid
// start byte", or "bytes in position 3-4" when the bad sequence is longer.
func utf8Error(b []byte) error {
	i := 0
	for i < len(b) {
		r, size := utf8.DecodeRune(b[i:])
		if r != utf8.RuneError || size > 1 {
			i += size
			continue
		}
		end, reason := badSequence(b, i)
		where := fmt.Sprintf("byte 0x%02x in position %d", b[i], i)
		if end-i > 1 {
			where = fmt.Sprintf("bytes in position %d-%d", i, end-1)
		}
		return fmt.Errorf("'utf-8' codec can't decode %s: %s", where, reason)
	}
	return nil
}

// badSequence returns the end of the invalid sequence starting at b[i] and
// CPython's reason for it.
func badSequence(b []byte, i int) (int, string) {
	c := b[i]
	var n int
	lo, hi := byte(0x80), byte(0xbf) // the second byte's range
	switch {
	case c >= 0xc2 && c <= 0xdf:
		n = 2
	case c >= 0xe0 && c <= 0xef:
		n = 3
		if c == 0xe0 {
			lo = 0xa0
		} else if c == 0xed {
			hi = 0x9f
		}
	case c >= 0xf0 && c <= 0xf4:
		n = 4
		if c == 0xf0 {
			lo = 0x90
		} else if c == 0xf4 {
			hi = 0x8f
		}
	default:
		return i + 1, "invalid start byte"
	}
	for k := 1; k < n; k++ {
		if i+k >= len(b) {
			return len(b), "unexpected end of data"
		}
		ok := b[i+k] >= 0x80 && b[i+k] <= 0xbf
		if k == 1 {
			ok = b[i+k] >= lo && b[i+k] <= hi
		}
		if !ok {
			return i + k, "invalid continuation byte"
		}
	}
	return i + n, "invalid continuation byte" // not reached: the sequence was valid
}
