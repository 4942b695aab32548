package jsonschema

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/placement-syncd/placement-syncd/placementsrv/pyfmt"
)

// Error messages embed Python reprs of instances and schema values, and
// clients match on them, so this file reproduces CPython 3's repr() and
// pprint.pformat(width=72) for the JSON value tree.
//
// Upstream renders the whole offending value, at a cost of its size times
// its depth; a request can make that gigabytes. Here every rendering is
// cut once it passes a few kilobytes and ends with truncatedMark, and the
// work stops there too: what is shown reads as upstream's, up to the cut.

const (
	// maxRepr bounds one repr inside a message ("[...] is not of type").
	// It is more than 4 bytes a rune times pprintWidth, so a cut repr
	// never fits on a pprint line.
	maxRepr = 1024
	// maxPformat bounds the pprint rendering of the instance.
	maxPformat = 4096
	// truncatedMark ends a cut rendering.
	truncatedMark = "..."
)

// pyRepr is repr(v), cut after maxRepr bytes. With sorted set, dict keys
// are sorted as pprint's internal repr does; otherwise insertion order is
// kept as dict.__repr__ does.
func pyRepr(v any, sorted bool) string {
	var b strings.Builder
	writeRepr(&b, v, sorted)
	return capped(&b, maxRepr)
}

// capped returns b's text, cut to limit bytes (at a rune boundary) and
// marked when longer.
func capped(b *strings.Builder, limit int) string {
	s := b.String()
	if len(s) <= limit {
		return s
	}
	for limit > 0 && !utf8.RuneStart(s[limit]) {
		limit--
	}
	return s[:limit] + truncatedMark
}

// writeRepr writes repr(v) to b, stopping soon after b holds maxRepr bytes.
func writeRepr(b *strings.Builder, v any, sorted bool) {
	if b.Len() > maxRepr {
		return
	}
	switch t := v.(type) {
	case nil:
		b.WriteString("None")
	case bool:
		if t {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
	case string:
		pyfmt.WriteRepr(b, t, maxRepr)
	case *number:
		b.WriteString(numRepr(t))
	case []any:
		b.WriteByte('[')
		for i, e := range t {
			if b.Len() > maxRepr {
				return
			}
			if i > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, e, sorted)
		}
		b.WriteByte(']')
	case *Object:
		keys := t.keys
		if sorted {
			keys = t.sortedKeys()
		}
		b.WriteByte('{')
		for i, k := range keys {
			if b.Len() > maxRepr {
				return
			}
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(strRepr(k))
			b.WriteString(": ")
			writeRepr(b, t.m[k], sorted)
		}
		b.WriteByte('}')
	default:
		fmt.Fprintf(b, "%v", t)
	}
}

func numRepr(n *number) string {
	if n.isInt() {
		return n.i.String()
	}
	return floatRepr(n.f)
}

// floatRepr is Python's float.__repr__: shortest round-tripping digits,
// positional notation for decimal exponents in [-4, 16), scientific
// otherwise, and always a fractional part or exponent.
func floatRepr(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	s := strconv.FormatFloat(f, 'e', -1, 64) // e.g. -1.2345e+06
	sign := ""
	if s[0] == '-' {
		sign, s = "-", s[1:]
	}
	epos := strings.IndexByte(s, 'e')
	mant, expStr := s[:epos], s[epos+1:]
	exp, _ := strconv.Atoi(expStr)
	digits := strings.Replace(mant, ".", "", 1)
	decpt := exp + 1 // value = 0.<digits> * 10**decpt
	if decpt > -4 && decpt <= 16 {
		switch {
		case decpt <= 0:
			return sign + "0." + strings.Repeat("0", -decpt) + digits
		case decpt >= len(digits):
			return sign + digits + strings.Repeat("0", decpt-len(digits)) + ".0"
		default:
			return sign + digits[:decpt] + "." + digits[decpt:]
		}
	}
	m := digits[:1]
	if len(digits) > 1 {
		m += "." + digits[1:]
	}
	esign := "+"
	if exp < 0 {
		esign, exp = "-", -exp
	}
	return fmt.Sprintf("%s%se%s%02d", sign, m, esign, exp)
}

// strRepr is str.__repr__, cut after maxRepr bytes.
func strRepr(s string) string {
	var b strings.Builder
	pyfmt.WriteRepr(&b, s, maxRepr)
	return capped(&b, maxRepr)
}

// strReprs is strRepr of each string, for a list in a message: once the
// reprs pass maxRepr bytes together, the rest is one truncatedMark.
func strReprs(ss []string) []string {
	var out []string
	n := 0
	for _, s := range ss {
		if n > maxRepr {
			return append(out, truncatedMark)
		}
		out = append(out, strRepr(s))
		n += len(out[len(out)-1]) + 2
	}
	return out
}

func runeLen(s string) int { return utf8.RuneCountInString(s) }

const pprintWidth = 72

// pformat is pprint.pformat(v, width=72), cut after limit bytes.
func pformat(v any, limit int) string {
	b := &ppBuf{limit: limit}
	ppFormat(b, v, 0, 0, 0)
	return capped(&b.Builder, limit)
}

// ppBuf is pformat's output, with the length past which it stops.
type ppBuf struct {
	strings.Builder
	limit int
}

func (b *ppBuf) full() bool { return b.Len() > b.limit }

// ppFormat writes pprint's rendering of v to b, stopping soon after b
// holds its limit. The repr it measures is cut at maxRepr, which
// is enough to tell whether v fits on the line.
func ppFormat(b *ppBuf, v any, indent, allowance, level int) {
	if b.full() {
		return
	}
	rep := pyRepr(v, true)
	if runeLen(rep) > pprintWidth-indent-allowance {
		switch t := v.(type) {
		case *Object:
			ppDict(b, t, indent, allowance)
			return
		case []any:
			ppList(b, t, indent, allowance)
			return
		case string:
			ppStr(b, t, indent, allowance, level+1)
			return
		}
	}
	b.WriteString(rep)
}

func ppDict(b *ppBuf, o *Object, indent, allowance int) {
	b.WriteByte('{')
	if o.len() > 0 {
		allowance++
		indent++
		delim := ",\n" + strings.Repeat(" ", indent)
		keys := o.sortedKeys()
		for i, k := range keys {
			if b.full() {
				return
			}
			last := i == len(keys)-1
			kr := strRepr(k)
			b.WriteString(kr)
			b.WriteString(": ")
			a := 1
			if last {
				a = allowance
			}
			ppFormat(b, o.m[k], indent+runeLen(kr)+2, a, 1)
			if !last {
				b.WriteString(delim)
			}
		}
	}
	b.WriteByte('}')
}

func ppList(b *ppBuf, l []any, indent, allowance int) {
	b.WriteByte('[')
	allowance++
	indent++
	delim := ",\n" + strings.Repeat(" ", indent)
	for i, e := range l {
		if b.full() {
			return
		}
		if i > 0 {
			b.WriteString(delim)
		}
		a := 1
		if i == len(l)-1 {
			a = allowance
		}
		ppFormat(b, e, indent, a, 1)
	}
	b.WriteByte(']')
}

// ppStr splits long strings into adjacent literals the way pprint does
// (at line ends, then at whitespace), parenthesised at top level.
func ppStr(b *ppBuf, s string, indent, allowance, level int) {
	if s == "" {
		b.WriteString(strRepr(s))
		return
	}
	// Only a prefix can be shown; chunking more of it is wasted work.
	if len(s) > b.limit {
		cut := b.limit
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut]
	}
	lines := splitLinesKeepEnds(s)
	if level == 1 {
		indent++
		allowance++
	}
	maxWidth := pprintWidth - indent
	maxWidth1 := maxWidth
	var chunks []string
	var rep string
	for i, line := range lines {
		rep = strRepr(line)
		if i == len(lines)-1 {
			maxWidth1 -= allowance
		}
		if runeLen(rep) <= maxWidth1 {
			chunks = append(chunks, rep)
			continue
		}
		parts := splitWordsSpaces(line)
		maxWidth2 := maxWidth
		current := ""
		for j, part := range parts {
			candidate := current + part
			if j == len(parts)-1 && i == len(lines)-1 {
				maxWidth2 -= allowance
			}
			if runeLen(strRepr(candidate)) > maxWidth2 {
				if current != "" {
					chunks = append(chunks, strRepr(current))
				}
				current = part
			} else {
				current = candidate
			}
		}
		if current != "" {
			chunks = append(chunks, strRepr(current))
		}
	}
	if len(chunks) == 1 {
		b.WriteString(rep)
		return
	}
	if level == 1 {
		b.WriteByte('(')
	}
	for i, c := range chunks {
		if i > 0 {
			b.WriteString("\n" + strings.Repeat(" ", indent))
		}
		b.WriteString(c)
	}
	if level == 1 {
		b.WriteByte(')')
	}
}

// splitWordsSpaces is re.findall(r'\S*\s*', s) minus the final empty match.
func splitWordsSpaces(s string) []string {
	var parts []string
	rs := []rune(s)
	i := 0
	for i < len(rs) {
		j := i
		for j < len(rs) && !pyfmt.IsSpace(rs[j]) {
			j++
		}
		for j < len(rs) && pyfmt.IsSpace(rs[j]) {
			j++
		}
		parts = append(parts, string(rs[i:j]))
		i = j
	}
	return parts
}

// splitLinesKeepEnds is str.splitlines(keepends=True).
func splitLinesKeepEnds(s string) []string {
	var lines []string
	rs := []rune(s)
	start := 0
	for i := 0; i < len(rs); i++ {
		switch rs[i] {
		case '\r':
			if i+1 < len(rs) && rs[i+1] == '\n' {
				i++
			}
		case '\n', '\v', '\f', 0x1c, 0x1d, 0x1e, 0x85, 0x2028, 0x2029:
		default:
			continue
		}
		lines = append(lines, string(rs[start:i+1]))
		start = i + 1
	}
	if start < len(rs) {
		lines = append(lines, string(rs[start:]))
	}
	return lines
}

// formatAsIndex renders a path as jsonschema does: word['a'][0].
func formatAsIndex(word string, path []any) string {
	var b strings.Builder
	b.WriteString(word)
	for _, p := range path {
		b.WriteByte('[')
		switch t := p.(type) {
		case string:
			b.WriteString(strRepr(t))
		case int:
			b.WriteString(strconv.Itoa(t))
		}
		b.WriteByte(']')
	}
	return b.String()
}
