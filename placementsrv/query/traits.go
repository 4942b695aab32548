package query

import (
	"slices"
	"strings"

	"github.com/placement-syncd/placement-syncd/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
)

// Traits is a parsed set of `required` parameters: every inner slice of
// Required must be satisfied by at least one of its traits (AND of ORs),
// and no trait in Forbidden may be present.
type Traits struct {
	Required  [][]string
	Forbidden []string
}

// ParseRequired parses the values of one `required<suffix>` parameter.
// Forbidden traits ("!T") need microversion 1.22; the any-of form
// ("in:A,B") and honouring repeated parameters need 1.39 — before that only
// the last value counts.
func ParseRequired(values []string, mv microversion.Version) (Traits, *apierror.Error) {
	allowForbidden := mv.AtLeast(microversion.ForbiddenTraits)
	allowAny := mv.AtLeast(microversion.AnyTraits)
	if !allowAny && len(values) > 1 {
		values = values[len(values)-1:]
	}
	var out Traits
	for _, v := range values {
		req, forb, herr := parseRequiredValue(v, allowForbidden, allowAny)
		if herr != nil {
			return Traits{}, herr
		}
		out.Required = append(out.Required, req...)
		out.Forbidden = AppendUnique(out.Forbidden, forb...)
	}
	return out, nil
}

// ParseRootRequired parses root_required: given once, required and
// forbidden traits in the `required` form without any-of, none both.
func ParseRootRequired(values []string) (required, forbidden []string, herr *apierror.Error) {
	if len(values) > 1 {
		return nil, nil, apierror.Codedf(400, apierror.CodeQueryDuplicateKey, "Query parameter 'root_required' may be specified only once.")
	}
	anyOfs, forbidden, herr := parseRequiredValue(values[0], true, false)
	if herr != nil {
		return nil, nil, herr
	}
	for _, anyOf := range anyOfs {
		required = AppendUnique(required, anyOf...)
	}
	var conflicts []string
	for _, t := range forbidden {
		if slices.Contains(required, t) {
			conflicts = append(conflicts, t)
		}
	}
	if len(conflicts) > 0 {
		return nil, nil, apierror.Codedf(400, apierror.CodeQueryBadValue, "Conflicting required and forbidden traits found in root_required: %s", strings.Join(conflicts, ", "))
	}
	return required, forbidden, nil
}

// parseRequiredValue parses one `required` value; see ParseRequired.
func parseRequiredValue(val string, allowForbidden, allowAny bool) ([][]string, []string, *apierror.Error) {
	if rest, ok := strings.CutPrefix(val, "in:"); ok {
		return parseAnyOf(val, rest, allowAny)
	}
	parts := strings.Split(val, ",")
	var required [][]string
	var forbidden []string
	empty := false
	for _, p := range parts {
		t := PyStrip(p)
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
			forbidden = AppendUnique(forbidden, name)
			continue
		}
		required = append(required, []string{t})
	}
	if empty {
		form := "HW_CPU_X86_VMX,!CUSTOM_MAGIC"
		if !allowForbidden {
			form = "HW_CPU_X86_VMX,CUSTOM_MAGIC"
		}
		return nil, nil, apierror.BadRequest("Invalid query string parameters: Expected 'required' parameter value of the form: %s. Got an empty trait in: %s", form, val)
	}
	if len(forbidden) > 0 && !allowForbidden {
		return nil, nil, apierror.BadRequest("Invalid query string parameters: Expected 'required' parameter value of the form: HW_CPU_X86_VMX,CUSTOM_MAGIC. Got: %s", val)
	}
	return required, forbidden, nil
}

// parseAnyOf parses the any-of form "in:A,B" of a `required` value val,
// rest being what follows "in:".
func parseAnyOf(val, rest string, allowAny bool) ([][]string, []string, *apierror.Error) {
	if !allowAny {
		return nil, nil, apierror.BadRequest("Invalid query string parameters: The format 'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' only supported since microversion 1.39. Got: %s", val)
	}
	var anyOf []string
	for _, t := range strings.Split(rest, ",") {
		anyOf = AppendUnique(anyOf, PyStrip(t))
	}
	for _, t := range anyOf {
		if t == "" {
			return nil, nil, apierror.BadRequest("Invalid query string parameters: Expected 'required' parameter value of the form: in:HW_CPU_X86_VMX,CUSTOM_MAGIC. Got an empty trait in: %s", val)
		}
	}
	for _, t := range anyOf {
		if strings.HasPrefix(t, "!") {
			return nil, nil, apierror.BadRequest("Invalid query string parameters: The format 'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' does not support forbidden traits. Got: %s", val)
		}
	}
	return [][]string{anyOf}, nil, nil
}
