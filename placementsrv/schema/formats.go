package schema

import (
	"strings"

	"github.com/placement-syncd/placement-syncd/placementsrv/jsonschema"
)

// formats are the format checks of Placement's FormatChecker: "uuid" is
// oslo.utils' is_uuid_like, which Placement registers.
func formats() jsonschema.Formats { return jsonschema.Formats{"uuid": isUUIDLike} }

// queryFormatsV15 are the format checks Placement 15.0.0 validates query
// strings with: its uuid checker is no longer registered on
// FormatChecker's class, only on the instance that bodies use, so queries
// get jsonschema's own "uuid".
func queryFormatsV15() jsonschema.Formats { return jsonschema.Formats{"uuid": jsonschema.UUID} }

// isUUIDLike mirrors oslo.utils' is_uuid_like: after dropping every
// "urn:" and "uuid:", trimming braces from both ends and removing all
// dashes, exactly 32 hex digits must remain. So dashless and oddly dashed
// uuids are accepted, and non-strings are rejected.
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
