package candidates

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/placement-syncd/placement-syncd/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
	"github.com/placement-syncd/placement-syncd/placementsrv/query"
)

// This file turns a GET /allocation_candidates query into a Request with
// upstream's checks and texts (placement/lib.py RequestGroup and
// RequestWideParams); package query parses the individual values.

var (
	groupKey     = regexp.MustCompile(`^(resources|required|member_of|in_tree)([1-9][0-9]*)?$`)
	groupKey1_33 = regexp.MustCompile(`^(resources|required|member_of|in_tree)([a-zA-Z0-9_-]{1,64})?$`)
)

// parsedGroup is a request group while parsing.
type parsedGroup struct {
	Group
	hasResources bool
}

// ParseQuery parses and checks a GET /allocation_candidates query at
// microversion mv: raw is the query string and q its values
// (query.Values(raw)), which the caller has already validated against the
// schema.
func ParseQuery(raw string, q url.Values, mv microversion.Version) (Request, *apierror.Error) {
	var req Request
	if herr := requestWideParams(q, &req); herr != nil {
		return req, herr
	}
	groups, herr := requestGroups(raw, q, mv)
	if herr != nil {
		return req, herr
	}
	if mv.AtLeast(microversion.SameSubtree) {
		if herr := checkResourceless(groups, req.SameSubtree); herr != nil {
			return req, herr
		}
	} else if herr := checkOrphans(groups); herr != nil {
		return req, herr
	}
	if mv.AtLeast(microversion.ForbiddenTraits) {
		if herr := checkConflictingTraits(groups); herr != nil {
			return req, herr
		}
	}
	granular := 0
	for _, g := range groups {
		if g.Suffix != "" {
			granular++
		}
		req.Groups = append(req.Groups, g.Group)
	}
	if req.GroupPolicy == "" && granular > 1 {
		return req, apierror.BadRequest(`The "group_policy" parameter is required when specifying more than one "resources{N}" parameter.`)
	}
	return req, nil
}

// requestWideParams reads limit, group_policy, root_required and
// same_subtree.
func requestWideParams(q url.Values, req *Request) *apierror.Error {
	if vs := q["limit"]; len(vs) > 0 {
		n, herr := query.ParseLimit(vs[0])
		if herr != nil {
			return herr
		}
		req.Limit = n
	}
	if vs := q["group_policy"]; len(vs) > 0 {
		req.GroupPolicy = vs[0]
	}
	if vs := q["root_required"]; len(vs) > 0 {
		required, forbidden, herr := query.ParseRootRequired(vs)
		if herr != nil {
			return herr
		}
		req.RootRequired, req.RootForbidden = required, forbidden
	}
	for _, v := range q["same_subtree"] {
		set, herr := query.ParseSameSubtree(v)
		if herr != nil {
			return herr
		}
		req.SameSubtree = append(req.SameSubtree, set)
	}
	return nil
}

// requestGroups builds the groups in the order their first parameter
// appears, as upstream walks req.GET.items().
func requestGroups(raw string, q url.Values, mv microversion.Version) ([]*parsedGroup, *apierror.Error) {
	pattern := groupKey
	if mv.AtLeast(microversion.AnySuffix) {
		pattern = groupKey1_33
	}
	var groups []*parsedGroup
	bySuffix := map[string]*parsedGroup{}
	for _, kv := range query.Ordered(raw) {
		m := pattern.FindStringSubmatch(kv.Key)
		if m == nil {
			continue
		}
		prefix, suffix := m[1], m[2]
		g := bySuffix[suffix]
		if g == nil {
			g = &parsedGroup{Group: Group{Suffix: suffix}}
			bySuffix[suffix] = g
			groups = append(groups, g)
		}
		switch prefix {
		case "resources":
			res, herr := query.ParseResources(kv.Value)
			if herr != nil {
				return nil, herr
			}
			g.Resources = g.Resources[:0]
			for _, ra := range res {
				g.Resources = append(g.Resources, Resource{Class: ra.Class, Amount: ra.Amount})
			}
			g.hasResources = len(g.Resources) > 0
		case "required":
			tq, herr := query.ParseRequired(q["required"+suffix], mv)
			if herr != nil {
				return nil, herr
			}
			g.Required, g.Forbidden = tq.Required, tq.Forbidden
		case "member_of":
			aq, herr := query.ParseMemberOf(q["member_of"+suffix], suffix, mv)
			if herr != nil {
				return nil, herr
			}
			g.MemberOf, g.ForbiddenAggs = aq.Required, aq.Forbidden
		case "in_tree":
			u, herr := query.ParseInTree(kv.Value)
			if herr != nil {
				return nil, herr
			}
			g.InTree = u
		}
	}
	return groups, nil
}

// checkResourceless is the 1.36+ check: at least one group with
// resources, every resourceless group named in same_subtree, every
// same_subtree suffix a real group.
func checkResourceless(groups []*parsedGroup, sets [][]string) *apierror.Error {
	var resourceless []string
	for _, g := range groups {
		if !g.hasResources {
			resourceless = append(resourceless, g.Suffix)
		}
	}
	if len(resourceless) == len(groups) {
		return apierror.Codedf(400, apierror.CodeQueryMissingValue, "There must be at least one resources or resources[$S] parameter.")
	}
	var inSubtree []string
	for _, set := range sets {
		for _, s := range set {
			inSubtree = query.AppendUnique(inSubtree, s)
		}
	}
	var bad []string
	for _, s := range resourceless {
		if !slices.Contains(inSubtree, s) {
			bad = append(bad, s)
		}
	}
	if len(bad) > 0 {
		return apierror.Codedf(400, apierror.CodeQueryBadValue, "Resourceless suffixed group request should be specified in `same_subtree` query param: bad group(s) - %s.", pyStrList(bad))
	}
	bad = nil
	for _, s := range inSubtree {
		found := false
		for _, g := range groups {
			found = found || g.Suffix == s
		}
		if !found {
			bad = append(bad, s)
		}
	}
	if len(bad) > 0 {
		var all []string
		for _, g := range groups {
			all = append(all, g.Suffix)
		}
		return apierror.Codedf(400, apierror.CodeQueryBadValue, "Real suffixes should be specified in `same_subtree`: %s not found in %s.", pyStrList(bad), pyStrList(all))
	}
	return nil
}

// checkOrphans is the pre-1.36 rule that every group has resources.
func checkOrphans(groups []*parsedGroup) *apierror.Error {
	var orphans []string
	for _, g := range groups {
		if len(g.Required) > 0 && !g.hasResources {
			orphans = append(orphans, "required"+g.Suffix)
		}
	}
	if len(orphans) > 0 {
		return apierror.BadRequest("All traits parameters must be associated with resources.  Found the following orphaned traits keys: %s", strings.Join(orphans, ", "))
	}
	for _, g := range groups {
		if !g.hasResources && (len(g.MemberOf) > 0 || len(g.ForbiddenAggs) > 0) {
			orphans = append(orphans, "member_of"+g.Suffix)
		}
	}
	if len(orphans) > 0 {
		return apierror.BadRequest("All member_of parameters must be associated with resources. Found the following orphaned member_of keys: %s", strings.Join(orphans, ", "))
	}
	for _, g := range groups {
		if !g.hasResources {
			return apierror.BadRequest("All request groups must specify resources.")
		}
	}
	if len(groups) == 0 {
		return apierror.BadRequest("At least one request group (`resources` or `resources{$S}`) is required.")
	}
	return nil
}

// checkConflictingTraits rejects an any-of set whose every trait is also
// forbidden in the same group.
func checkConflictingTraits(groups []*parsedGroup) *apierror.Error {
	var conflicts []string
	for _, g := range groups {
		for _, anyOf := range g.Required {
			all := true
			for _, t := range anyOf {
				all = all && slices.Contains(g.Forbidden, t)
			}
			if all {
				sorted := slices.Clone(anyOf)
				sort.Strings(sorted)
				conflicts = append(conflicts, fmt.Sprintf("required%s: (%s)", g.Suffix, strings.Join(sorted, ", ")))
			}
		}
	}
	if len(conflicts) > 0 {
		sort.Strings(conflicts)
		return apierror.BadRequest("Conflicting required and forbidden traits found in the following traits keys: %s", strings.Join(conflicts, ", "))
	}
	return nil
}

// pyStrList renders strings as Python's repr of a list.
func pyStrList(ss []string) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, s := range ss {
		if i > 0 {
			b.WriteString(", ")
		}
		q := byte('\'')
		if strings.Contains(s, "'") && !strings.Contains(s, `"`) {
			q = '"'
		}
		b.WriteByte(q)
		for _, c := range []byte(s) {
			if c == q || c == '\\' {
				b.WriteByte('\\')
			}
			b.WriteByte(c)
		}
		b.WriteByte(q)
	}
	b.WriteByte(']')
	return b.String()
}
