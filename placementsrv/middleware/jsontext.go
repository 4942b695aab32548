package middleware

import (
	"fmt"
	"unicode/utf8"

	"github.com/placement-syncd/placement-syncd/placementsrv/jsonschema"
	"github.com/placement-syncd/placement-syncd/placementsrv/pyfmt"
)

// checkJSONText rejects, before any decoding, what upstream cannot take
// from a body and encoding/json would quietly accept: bytes that are not
// UTF-8 (upstream decodes the body first and answers with Python's codec
// error) and nesting deeper than jsonschema.MaxDepth (upstream's recursive
// decoder and error rendering fail on deep nesting; here it bounds the
// work and the size of an error message). It returns the offset of the
// first escaped lone surrogate (\ud800 with no low half), which
// encoding/json would store as U+FFFD, or -1; the caller reports it only
// once the document has parsed, so that a syntax error still comes first.
func checkJSONText(body []byte) (surrogate int, err error) {
	if !utf8.Valid(body) {
		return -1, pyfmt.UTF8Error(body)
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
			if depth++; depth > jsonschema.MaxDepth {
				return -1, fmt.Errorf("nesting deeper than %d levels at position %d", jsonschema.MaxDepth, i)
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
