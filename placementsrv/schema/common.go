package schema

// Patterns shared by several schemas (placement/schemas/common.py).
const (
	uuidPattern            = "^[0-9a-fA-F-]{36}$"
	rcPattern              = "^[A-Z0-9_]+$"
	customPattern          = "^CUSTOM_[A-Z0-9_]+$"
	consumerTypePattern    = rcPattern
	consumerTypeGetPattern = consumerTypePattern + "|^all|^unknown$"
	groupPat               = "[1-9][0-9]*"         // request group suffixes
	groupPatNamed          = "[a-zA-Z0-9_-]{1,64}" // from microversion.AnySuffix
)

// Limits from placement/db/constants.py.
const (
	maxInt        = 0x7FFFFFFF
	sqlSPFloatMax = 3.40282e+38
)

// uuidString is a string in the "uuid" format.
func uuidString() *object { return obj("type", "string", "format", "uuid") }

// idString is a project or user id.
func idString() *object { return obj("type", "string", "minLength", 1, "maxLength", 255) }

// consumerType is a consumer type name matching pattern (the GET /usages
// pattern also admits "all" and "unknown").
func consumerType(pattern string) *object {
	return obj(
		"type", "string",
		"pattern", pattern,
		"minLength", 1,
		"maxLength", 255,
	)
}
