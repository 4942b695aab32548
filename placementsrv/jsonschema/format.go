package jsonschema

import "strings"

// Formats are the checks a schema's "format" keywords assert, by format
// name, as a jsonschema FormatChecker holds them. A format not in it
// passes, as one jsonschema does not know does; with none, formats are
// annotations only, as in jsonschema without a format checker.
type Formats map[string]func(any) bool

// UUID is jsonschema's own "uuid" format check: Python's uuid.UUID must
// parse the string and it must have dashes at offsets 8, 13, 18 and 23.
// Non-strings pass, as there.
func UUID(v any) bool {
	s, ok := v.(string)
	if !ok {
		return true
	}
	if len(s) < 24 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return false
	}
	return pyUUIDParses(s)
}

// pyUUIDParses is whether uuid.UUID(hex=s) succeeds: after dropping every
// "urn:" and "uuid:", trimming braces from both ends and removing all
// dashes, 32 characters must remain that int(x, 16) accepts.
func pyUUIDParses(s string) bool {
	s = strings.ReplaceAll(s, "urn:", "")
	s = strings.ReplaceAll(s, "uuid:", "")
	s = strings.Trim(s, "{}")
	s = strings.ReplaceAll(s, "-", "")
	return len(s) == 32 && pyHexInt(s)
}

// pyHexInt is whether Python's int(s, 16) accepts s (ASCII only):
// surrounding whitespace, a "+", a "0x" prefix and single underscores
// between digits are allowed.
func pyHexInt(s string) bool {
	s = strings.Trim(s, " \t\n\v\f\r\x1c\x1d\x1e\x1f")
	s = strings.TrimPrefix(s, "+")
	if len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		s = s[2:]
		if s[0] == '_' {
			s = s[1:] // int accepts one underscore after the prefix
		}
	}
	if s == "" {
		return false
	}
	prevDigit := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F':
			prevDigit = true
		case c == '_' && prevDigit && i+1 < len(s):
			prevDigit = false
		default:
			return false
		}
	}
	return true
}

// applyFormats makes every format keyword of n's tree check with formats'
// entry for its name (compiled trees are never shared, so it updates them
// in place).
func applyFormats(n *node, formats Formats) {
	for i := range n.keywords {
		kw := &n.keywords[i]
		if kw.name == "format" {
			name, _ := kw.value.(string)
			kw.formatFn = formats[name]
		}
		if kw.sub != nil {
			applyFormats(kw.sub, formats)
		}
		for _, s := range kw.subs {
			applyFormats(s, formats)
		}
		for _, p := range kw.props {
			applyFormats(p.node, formats)
		}
	}
}
