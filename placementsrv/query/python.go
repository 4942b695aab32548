package query

import (
	"math"
	"strconv"
	"strings"
	"unicode"
)

// pyIsSpace is Python's str.isspace for one rune: Go's unicode.IsSpace plus
// the ASCII file, group, record and unit separators.
func pyIsSpace(r rune) bool { return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f) }

// PyStrip is Python's str.strip() without arguments.
func PyStrip(s string) string { return strings.TrimFunc(s, pyIsSpace) }

// PyIntLiteral parses what Python's int() accepts from a string in base 10:
// surrounding whitespace, a sign, and single underscores between digits.
// Values beyond int64 saturate, which no inventory can satisfy anyway.
func PyIntLiteral(s string) (int64, bool) {
	t := PyStrip(s)
	neg := false
	if t != "" && (t[0] == '+' || t[0] == '-') {
		neg = t[0] == '-'
		t = t[1:]
	}
	if t == "" || t[0] == '_' || t[len(t)-1] == '_' || strings.Contains(t, "__") {
		return 0, false
	}
	digits := strings.ReplaceAll(t, "_", "")
	for _, c := range digits {
		if !unicode.IsDigit(c) {
			return 0, false
		}
	}
	var ascii strings.Builder
	for _, c := range digits {
		ascii.WriteByte(byte('0' + digitValue(c)))
	}
	n, err := strconv.ParseInt(ascii.String(), 10, 64)
	if err != nil {
		n = math.MaxInt64
	}
	if neg {
		n = -n
	}
	return n, true
}

// digitValue returns the value of a Unicode decimal digit (Python's int()
// accepts any script's digits). Decimal digits come in contiguous runs of
// ten starting at zero, so the value is the offset from the start of the
// contiguous region modulo ten.
func digitValue(c rune) int {
	start := c
	for unicode.IsDigit(start - 1) {
		start--
	}
	return int(c-start) % 10
}
