package jsonschema

import (
	"regexp"
	"strings"
)

// compilePattern translates the subset of Python regular expressions that
// schemas use to RE2. Python's "$" (outside MULTILINE) also matches before a
// final newline, so "abc\n" matches "^abc$"; RE2's "$" does not, hence the
// rewrite. Patterns are applied unanchored, like re.search.
func compilePattern(p string) (*regexp.Regexp, error) {
	var b strings.Builder
	inClass := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\' && i+1 < len(p):
			b.WriteByte(c)
			b.WriteByte(p[i+1])
			i++
			continue
		case inClass:
			if c == ']' {
				inClass = false
			}
		case c == '[':
			inClass = true
			b.WriteByte(c)
			// A leading "]" (or "^]") is literal inside a class.
			if i+1 < len(p) && p[i+1] == '^' {
				b.WriteByte('^')
				i++
			}
			if i+1 < len(p) && p[i+1] == ']' {
				b.WriteString(`\]`)
				i++
			}
			continue
		case c == '$':
			b.WriteString(`(?:\n?\z)`)
			continue
		}
		b.WriteByte(c)
	}
	return regexp.Compile(b.String())
}
