package query

import (
	"strings"

	"github.com/placement-syncd/placement-syncd/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
)

// Aggregates is a parsed set of `member_of` parameters: a provider must be
// in at least one aggregate of every inner slice of Required and in none
// of Forbidden.
type Aggregates struct {
	Required  [][]string
	Forbidden []string
}

// ParseMemberOf parses the values of one `member_of<suffix>` parameter.
// Repeating it needs microversion 1.24; forbidden aggregates ("!U",
// "!in:U1,U2") need 1.32.
func ParseMemberOf(values []string, suffix string, mv microversion.Version) (Aggregates, *apierror.Error) {
	if !mv.AtLeast(microversion.MultiMemberOf) && len(values) > 1 {
		return Aggregates{}, apierror.BadRequest("Multiple member_of%s parameters are not supported", suffix)
	}
	allowForbidden := mv.AtLeast(microversion.ForbiddenAggregates)
	var out Aggregates
	for _, v := range values {
		req, forb, herr := parseMemberOfValue(v)
		if herr != nil {
			return Aggregates{}, herr
		}
		if len(req) > 0 {
			out.Required = append(out.Required, req)
		}
		if len(forb) > 0 {
			if !allowForbidden {
				return Aggregates{}, apierror.BadRequest("Forbidden member_of%s parameters are not supported in the specified microversion", suffix)
			}
			out.Forbidden = AppendUnique(out.Forbidden, forb...)
		}
	}
	return out, nil
}

// parseMemberOfValue parses one member_of value: a uuid, "!uuid", or
// "in:"/"!in:" followed by comma-separated uuids.
func parseMemberOfValue(val string) (required, forbidden []string, herr *apierror.Error) {
	hasIn := strings.HasPrefix(val, "in:") || strings.HasPrefix(val, "!in:")
	if strings.Contains(val, ",") && !hasIn {
		return nil, nil, apierror.BadRequest("Multiple values for 'member_of' must be prefixed with the 'in:' or '!in:' keyword using the valid microversion. Got: %s", val)
	}
	switch {
	case strings.HasPrefix(val, "!in:"):
		forbidden = AppendUnique(nil, strings.Split(val[4:], ",")...)
	case strings.HasPrefix(val, "!"):
		forbidden = []string{val[1:]}
	case strings.HasPrefix(val, "in:"):
		required = AppendUnique(nil, strings.Split(val[3:], ",")...)
	default:
		required = []string{val}
	}
	for _, list := range [][]string{required, forbidden} {
		for _, u := range list {
			if !IsUUIDLike(u) {
				return nil, nil, apierror.BadRequest("Invalid query string parameters: Expected 'member_of' parameter to contain valid UUID(s). Got: %s", u)
			}
		}
	}
	return required, forbidden, nil
}
