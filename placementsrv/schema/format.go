package schema

import "strings"

// formatChecker returns the checker for the formats Placement's
// FormatChecker knows about that its schemas use; nil means "always valid",
// as for any format jsonschema does not know.
func formatChecker(name string) func(any) bool {
	if name == "uuid" {
		return isUUIDLike
	}
	return nil
}

// isUUIDLike mirrors oslo.utils' is_uuid_like, which Placement registers as
// the "uuid" format: after dropping every "urn:" and "uuid:", trimming
// braces from both ends and removing all dashes, exactly 32 hex digits must
// remain. So dashless and oddly dashed uuids are accepted, and non-strings
// are rejected.
func isUUIDLike(v any) bool {
	s, ok := v.(string)
	if !ok {
		return false
	}
	s = strings.ReplaceAll(s, "urn:", "")
	s = strings.ReplaceAll(s, "uuid:", "")
	s = strings.Trim(s, "{}")
	s = strings.ReplaceAll(s, "-", "")
	if len(s) != 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// isHyphenatedUUID is jsonschema's own "uuid" format, which Placement
// 15.0.0 validates query strings with (its uuid checker is no longer
// registered on FormatChecker's class, only on the instance that bodies
// use): Python's uuid.UUID must parse the string and it must have dashes
// at offsets 8, 13, 18 and 23. Non-strings pass, as there.
func isHyphenatedUUID(v any) bool {
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

// withFormat returns n's tree with every format keyword named name checked
// by fn instead; compiled trees are never shared, so it updates in place.
func withFormat(n *node, name string, fn func(any) bool) *node {
	for i := range n.keywords {
		kw := &n.keywords[i]
		if kw.name == "format" && kw.value == name {
			kw.formatFn = fn
		}
		if kw.sub != nil {
			withFormat(kw.sub, name, fn)
		}
		for _, s := range kw.subs {
			withFormat(s, name, fn)
		}
		for _, p := range kw.props {
			withFormat(p.node, name, fn)
		}
	}
	return n
}
