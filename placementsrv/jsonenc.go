package placementsrv

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"unicode/utf8"
)

// rawJSON is a response body already encoded; writeResponse sends it as
// is. Hot list endpoints build their bodies with the append helpers below.
type rawJSON []byte

// MarshalJSON implements json.Marshaler for rawJSON nested in other values.
func (r rawJSON) MarshalJSON() ([]byte, error) { return r, nil }

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string, escaping as encoding/json
// does without HTML escaping: quotes, backslashes, control characters,
// U+2028/U+2029, and invalid UTF-8 as U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	b = appendEscaped(b, s)
	return append(b, '"')
}

// appendEscaped appends the inside of s's JSON string form.
func appendEscaped(b []byte, s string) []byte {
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

func appendInt(b []byte, n int64) []byte { return strconv.AppendInt(b, n, 10) }

// newUUID returns a random (version 4) uuid in canonical form.
func newUUID() string {
	var u [16]byte
	_, _ = rand.Read(u[:])
	u[6] = (u[6] & 0x0f) | 0x40
	u[8] = (u[8] & 0x3f) | 0x80
	h := hex.EncodeToString(u[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
