package query

import (
	"strings"

	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
)

// ParseInTree is upstream's normalize_in_tree_qs_params: a provider uuid,
// surrounding whitespace ignored.
func ParseInTree(val string) (string, *apierror.Error) {
	v := PyStrip(val)
	if !IsUUIDLike(v) {
		return "", apierror.BadRequest("Invalid query string parameters: Expected 'in_tree' parameter to be a format of uuid. Got: %s", val)
	}
	return v, nil
}

// IsUUIDLike is oslo.utils' is_uuid_like, Placement's notion of a uuid:
// after removing every "urn:" and "uuid:", trimming braces at both ends and
// dropping all dashes, exactly 32 hex digits remain.
func IsUUIDLike(s string) bool {
	_, ok := uuidHex(s)
	return ok
}

// NormalizeUUID renders a uuid-like string in the canonical lower-case
// dashed form, as Python's str(uuid.UUID(s)) does.
func NormalizeUUID(s string) (string, bool) {
	h, ok := uuidHex(s)
	if !ok {
		return "", false
	}
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32], true
}

func uuidHex(s string) (string, bool) {
	s = strings.ReplaceAll(s, "urn:", "")
	s = strings.ReplaceAll(s, "uuid:", "")
	s = strings.Trim(s, "{}")
	s = strings.ReplaceAll(s, "-", "")
	if len(s) != 32 {
		return "", false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return "", false
		}
	}
	return strings.ToLower(s), true
}
