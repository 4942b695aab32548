package placementsrv

import (
	"math"
	"net/url"
	"strconv"
	"strings"
	"unicode"

	"github.com/placement-syncd/placement-syncd/placementsrv/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// This file parses the query parameters that GET /resource_providers and
// GET /allocation_candidates share: required (traits), member_of
// (aggregates), resources and in_tree. The accepted forms and the error
// texts are upstream's (placement/util.py normalize_*), because clients
// and the acceptance tests match on them.

// traitQuery is a parsed set of `required` parameters: every inner slice of
// Required must be satisfied by at least one of its traits (AND of ORs),
// and no trait in Forbidden may be present.
type traitQuery struct {
	Required  [][]string
	Forbidden []string
}

// aggregateQuery is a parsed set of `member_of` parameters: a provider must
// be in at least one aggregate of every inner slice of Required and in none
// of Forbidden.
type aggregateQuery struct {
	Required  [][]string
	Forbidden []string
}

// queryValues parses the raw query string as webob does for req.GET:
// blank values are kept and repeated keys keep every value in order.
// Malformed escapes are skipped rather than failing the whole request.
func queryValues(r *request) url.Values {
	q, _ := url.ParseQuery(r.URL.RawQuery)
	return q
}

// parseRequired parses the values of one `required<suffix>` parameter.
// Forbidden traits ("!T") need microversion 1.22; the any-of form
// ("in:A,B") and honouring repeated parameters need 1.39 — before that only
// the last value counts.
func parseRequired(values []string, mv microversion.Version) (traitQuery, *httpError) {
	allowForbidden := mv.AtLeast(microversion.ForbiddenTraits)
	allowAny := mv.AtLeast(microversion.AnyTraits)
	if !allowAny && len(values) > 1 {
		values = values[len(values)-1:]
	}
	var out traitQuery
	for _, v := range values {
		req, forb, herr := parseRequiredValue(v, allowForbidden, allowAny)
		if herr != nil {
			return traitQuery{}, herr
		}
		out.Required = append(out.Required, req...)
		out.Forbidden = appendUnique(out.Forbidden, forb...)
	}
	return out, nil
}

// parseRequiredValue parses one `required` value; see parseRequired.
func parseRequiredValue(val string, allowForbidden, allowAny bool) ([][]string, []string, *httpError) {
	if rest, ok := strings.CutPrefix(val, "in:"); ok {
		if !allowAny {
			return nil, nil, badRequest("Invalid query string parameters: The format 'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' only supported since microversion 1.39. Got: %s", val)
		}
		var anyOf []string
		for _, t := range strings.Split(rest, ",") {
			anyOf = appendUnique(anyOf, pyStrip(t))
		}
		for _, t := range anyOf {
			if t == "" {
				return nil, nil, badRequest("Invalid query string parameters: Expected 'required' parameter value of the form: in:HW_CPU_X86_VMX,CUSTOM_MAGIC. Got an empty trait in: %s", val)
			}
		}
		for _, t := range anyOf {
			if strings.HasPrefix(t, "!") {
				return nil, nil, badRequest("Invalid query string parameters: The format 'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' does not support forbidden traits. Got: %s", val)
			}
		}
		return [][]string{anyOf}, nil, nil
	}
	parts := strings.Split(val, ",")
	var required [][]string
	var forbidden []string
	empty := false
	for _, p := range parts {
		t := pyStrip(p)
		if t == "" {
			empty = true
			continue
		}
		if strings.HasPrefix(t, "!") {
			// Upstream strips any number of leading '!'.
			name := strings.TrimLeft(t, "!")
			if name == "" {
				empty = true
			}
			forbidden = appendUnique(forbidden, name)
			continue
		}
		required = append(required, []string{t})
	}
	if empty {
		form := "HW_CPU_X86_VMX,!CUSTOM_MAGIC"
		if !allowForbidden {
			form = "HW_CPU_X86_VMX,CUSTOM_MAGIC"
		}
		return nil, nil, badRequest("Invalid query string parameters: Expected 'required' parameter value of the form: %s. Got an empty trait in: %s", form, val)
	}
	if len(forbidden) > 0 && !allowForbidden {
		return nil, nil, badRequest("Invalid query string parameters: Expected 'required' parameter value of the form: HW_CPU_X86_VMX,CUSTOM_MAGIC. Got: %s", val)
	}
	return required, forbidden, nil
}

// parseMemberOf parses the values of one `member_of<suffix>` parameter.
// Repeating it needs microversion 1.24; forbidden aggregates ("!U",
// "!in:U1,U2") need 1.32.
func parseMemberOf(values []string, suffix string, mv microversion.Version) (aggregateQuery, *httpError) {
	if !mv.AtLeast(microversion.MultiMemberOf) && len(values) > 1 {
		return aggregateQuery{}, badRequest("Multiple member_of%s parameters are not supported", suffix)
	}
	allowForbidden := mv.AtLeast(microversion.ForbiddenAggregates)
	var out aggregateQuery
	for _, v := range values {
		req, forb, herr := parseMemberOfValue(v)
		if herr != nil {
			return aggregateQuery{}, herr
		}
		if len(req) > 0 {
			out.Required = append(out.Required, req)
		}
		if len(forb) > 0 {
			if !allowForbidden {
				return aggregateQuery{}, badRequest("Forbidden member_of%s parameters are not supported in the specified microversion", suffix)
			}
			out.Forbidden = appendUnique(out.Forbidden, forb...)
		}
	}
	return out, nil
}

// parseMemberOfValue parses one member_of value: a uuid, "!uuid", or
// "in:"/"!in:" followed by comma-separated uuids.
func parseMemberOfValue(val string) (required, forbidden []string, herr *httpError) {
	hasIn := strings.HasPrefix(val, "in:") || strings.HasPrefix(val, "!in:")
	if strings.Contains(val, ",") && !hasIn {
		return nil, nil, badRequest("Multiple values for 'member_of' must be prefixed with the 'in:' or '!in:' keyword using the valid microversion. Got: %s", val)
	}
	switch {
	case strings.HasPrefix(val, "!in:"):
		forbidden = appendUnique(nil, strings.Split(val[4:], ",")...)
	case strings.HasPrefix(val, "!"):
		forbidden = []string{val[1:]}
	case strings.HasPrefix(val, "in:"):
		required = appendUnique(nil, strings.Split(val[3:], ",")...)
	default:
		required = []string{val}
	}
	for _, list := range [][]string{required, forbidden} {
		for _, u := range list {
			if !isUUIDLike(u) {
				return nil, nil, badRequest("Invalid query string parameters: Expected 'member_of' parameter to contain valid UUID(s). Got: %s", u)
			}
		}
	}
	return required, forbidden, nil
}

// parseResources parses "RC:N,RC:N" into amounts in first-seen order; a
// repeated class keeps its first position and its last amount, like the
// Python dict upstream builds.
func parseResources(qs string) ([]store.ResourceAmount, *httpError) {
	if pyStrip(qs) == "" {
		return nil, badRequest("Badly formed resources parameter. Expected resources query string parameter in form: ?resources=VCPU:2,MEMORY_MB:1024. Got: empty string.")
	}
	var out []store.ResourceAmount
	for _, rt := range strings.Split(qs, ",") {
		name, amount, ok := strings.Cut(rt, ":")
		if !ok || strings.Contains(amount, ":") {
			return nil, badRequest("Badly formed resources parameter. Expected resources query string parameter in form: ?resources=VCPU:2,MEMORY_MB:1024. Got: %s.", rt)
		}
		n, ok := pyIntLiteral(amount)
		if !ok {
			return nil, badRequest("Requested resource %s expected positive integer amount. Got: %s.", name, amount)
		}
		if n < 1 {
			return nil, badRequest("Requested resource %s requires amount >= 1. Got: %d.", name, n)
		}
		found := false
		for i := range out {
			if out[i].Class == name {
				out[i].Amount, found = n, true
				break
			}
		}
		if !found {
			out = append(out, store.ResourceAmount{Class: name, Amount: n})
		}
	}
	return out, nil
}

// parseInTree is upstream's normalize_in_tree_qs_params: a provider uuid,
// surrounding whitespace ignored.
func parseInTree(val string) (string, *httpError) {
	v := pyStrip(val)
	if !isUUIDLike(v) {
		return "", badRequest("Invalid query string parameters: Expected 'in_tree' parameter to be a format of uuid. Got: %s", val)
	}
	return v, nil
}

// appendUnique appends the values of vs not already in dst.
func appendUnique(dst []string, vs ...string) []string {
outer:
	for _, v := range vs {
		for _, d := range dst {
			if d == v {
				continue outer
			}
		}
		dst = append(dst, v)
	}
	return dst
}

// pyIsSpace is Python's str.isspace for one rune: Go's unicode.IsSpace plus
// the ASCII file, group, record and unit separators.
func pyIsSpace(r rune) bool { return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f) }

// pyStrip is Python's str.strip() without arguments.
func pyStrip(s string) string { return strings.TrimFunc(s, pyIsSpace) }

// pyIntLiteral parses what Python's int() accepts from a string in base 10:
// surrounding whitespace, a sign, and single underscores between digits.
// Values beyond int64 saturate, which no inventory can satisfy anyway.
func pyIntLiteral(s string) (int64, bool) {
	t := pyStrip(s)
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

// isUUIDLike is oslo.utils' is_uuid_like, Placement's notion of a uuid:
// after removing every "urn:" and "uuid:", trimming braces at both ends and
// dropping all dashes, exactly 32 hex digits remain.
func isUUIDLike(s string) bool {
	_, ok := uuidHex(s)
	return ok
}

// normalizeUUID renders a uuid-like string in the canonical lower-case
// dashed form, as Python's str(uuid.UUID(s)) does.
func normalizeUUID(s string) (string, bool) {
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
