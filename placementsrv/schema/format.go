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
