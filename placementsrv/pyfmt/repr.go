package pyfmt

import (
	"fmt"
	"strings"
	"unicode"
)

// Repr is str.__repr__ of s.
func Repr(s string) string {
	var b strings.Builder
	WriteRepr(&b, s, -1)
	return b.String()
}

// WriteRepr writes str.__repr__ of s to b. With limit >= 0 it stops once
// b holds more than limit bytes, leaving the closing quote out, so that a
// huge value costs no more than the part that is shown.
func WriteRepr(b *strings.Builder, s string, limit int) {
	quote := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		quote = '"'
	}
	b.WriteByte(quote)
	for _, r := range s {
		if limit >= 0 && b.Len() > limit {
			return
		}
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == rune(quote):
			b.WriteByte('\\')
			b.WriteByte(quote)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(b, `\x%02x`, r)
		case r < 0x7f, unicode.IsPrint(r):
			b.WriteRune(r)
		case r < 0x100:
			fmt.Fprintf(b, `\x%02x`, r)
		case r < 0x10000:
			fmt.Fprintf(b, `\u%04x`, r)
		default:
			fmt.Fprintf(b, `\U%08x`, r)
		}
	}
	b.WriteByte(quote)
}

// IsSpace is str.isspace for one character (Go's table lacks the ASCII
// information separators that Python counts as whitespace).
func IsSpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}
