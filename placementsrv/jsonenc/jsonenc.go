// Package jsonenc writes JSON as Python's json module does (no HTML
// escaping), for answers the server builds by hand: hot list endpoints and
// allocation candidates append their bodies piece by piece rather than
// marshalling maps. It also walks request objects in document order, as
// Python's dicts keep them.
package jsonenc

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// Raw is a response body already encoded; the response writer sends it
// as is.
type Raw []byte

// MarshalJSON implements json.Marshaler for Raw nested in other values.
func (r Raw) MarshalJSON() ([]byte, error) { return r, nil }

// Marshal encodes v without HTML escaping, as Python's json does.
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	return b[:len(b)-1], nil // drop Encode's newline
}

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string, escaping as encoding/json
// does without HTML escaping: quotes, backslashes, control characters,
// U+2028/U+2029, and invalid UTF-8 as U+FFFD.
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	b = AppendEscaped(b, s)
	return append(b, '"')
}

// AppendEscaped appends the inside of s's JSON string form.
func AppendEscaped(b []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(b, s[start:]...)
}

// AppendStringASCII appends s as Python's json.dumps does by default
// (ensure_ascii): as AppendString, with DEL and every non-ASCII character
// as a \uXXXX escape, a surrogate pair above U+FFFF.
func AppendStringASCII(b []byte, s string) []byte {
	b = append(b, '"')
	for _, r := range string(AppendEscaped(nil, s)) {
		switch {
		case r < 0x7f:
			b = append(b, byte(r))
		case r > 0xffff:
			r -= 0x10000
			b = appendU4(b, 0xd800+(r>>10))
			b = appendU4(b, 0xdc00+(r&0x3ff))
		default:
			b = appendU4(b, r)
		}
	}
	return append(b, '"')
}

// appendU4 appends the \uXXXX escape of r (at most U+FFFF).
func appendU4(b []byte, r rune) []byte {
	return append(b, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
}

// AppendInt appends n in decimal.
func AppendInt(b []byte, n int64) []byte { return strconv.AppendInt(b, n, 10) }
