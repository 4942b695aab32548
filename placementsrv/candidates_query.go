package placementsrv

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/placement-syncd/placement-syncd/placementsrv/candidates"
	"github.com/placement-syncd/placement-syncd/placementsrv/microversion"
)

// This file turns a GET /allocation_candidates query into a
// candidates.Request with upstream's checks and texts (placement/lib.py
// RequestGroup and RequestWideParams), reusing query.go's parsers for the
// individual parameter values.

var (
	groupKey     = regexp.MustCompile(`^(resources|required|member_of|in_tree)([1-9][0-9]*)?$`)
	groupKey1_33 = regexp.MustCompile(`^(resources|required|member_of|in_tree)([a-zA-Z0-9_-]{1,64})?$`)
)

// queryPair is one key=value of the query string.
type queryPair struct{ key, value string }

// orderedQuery splits the raw query into pairs in their order, decoded as
// url.ParseQuery does (pairs that fail to decode are skipped). Group order
// decides which error upstream reports first.
func orderedQuery(raw string) []queryPair {
	var out []queryPair
	for raw != "" {
		var part string
		part, raw, _ = strings.Cut(raw, "&")
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, "=")
		k, err1 := url.QueryUnescape(k)
		v, err2 := url.QueryUnescape(v)
		if err1 != nil || err2 != nil {
			continue
		}
		out = append(out, queryPair{k, v})
	}
	return out
}

// parsedGroup is a request group while parsing.
type parsedGroup struct {
	candidates.Group
	hasResources bool
}

// candidatesRequest parses and checks the query.
func candidatesRequest(r *request, q url.Values) (candidates.Request, *httpError) {
	var req candidates.Request
	if herr := requestWideParams(r, q, &req); herr != nil {
		return req, herr
	}
	groups, herr := requestGroups(r, q)
	if herr != nil {
		return req, herr
	}
	if r.at(microversion.SameSubtree) {
		if herr := checkResourceless(groups, req.SameSubtree); herr != nil {
			return req, herr
		}
	} else if herr := checkOrphans(groups); herr != nil {
		return req, herr
	}
	if r.at(microversion.ForbiddenTraits) {
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
		return req, badRequest(`The "group_policy" parameter is required when specifying more than one "resources{N}" parameter.`)
	}
	return req, nil
}

// requestWideParams reads limit, group_policy, root_required and
// same_subtree.
func requestWideParams(r *request, q url.Values, req *candidates.Request) *httpError {
	if vs := q["limit"]; len(vs) > 0 {
		n, err := strconv.Atoi(vs[0])
		if err != nil {
			return badRequest("Invalid query string parameters: %s is not a valid limit", vs[0])
		}
		req.Limit = n
	}
	if vs := q["group_policy"]; len(vs) > 0 {
		req.GroupPolicy = vs[0]
	}
	if vs := q["root_required"]; len(vs) > 0 {
		if len(vs) > 1 {
			return codedf(400, CodeQueryDuplicateKey, "Query parameter 'root_required' may be specified only once.")
		}
		required, forbidden, herr := parseRequiredValue(vs[0], true, false)
		if herr != nil {
			return herr
		}
		for _, anyOf := range required {
			req.RootRequired = appendUnique(req.RootRequired, anyOf...)
		}
		req.RootForbidden = forbidden
		var conflicts []string
		for _, t := range req.RootForbidden {
			if slices.Contains(req.RootRequired, t) {
				conflicts = append(conflicts, t)
			}
		}
		if len(conflicts) > 0 {
			return codedf(400, CodeQueryBadValue, "Conflicting required and forbidden traits found in root_required: %s", strings.Join(conflicts, ", "))
		}
	}
	for _, v := range q["same_subtree"] {
		var set []string
		for _, suf := range strings.Split(v, ",") {
			suf = pyStrip(suf)
			if suf == "" {
				return codedf(400, CodeQueryBadValue, "Empty string (unsuffixed group) can not be specified in `same_subtree` ")
			}
			set = appendUnique(set, suf)
		}
		req.SameSubtree = append(req.SameSubtree, set)
	}
	return nil
}

// requestGroups builds the groups in the order their first parameter
// appears, as upstream walks req.GET.items().
func requestGroups(r *request, q url.Values) ([]*parsedGroup, *httpError) {
	pattern := groupKey
	if r.at(microversion.AnySuffix) {
		pattern = groupKey1_33
	}
	var groups []*parsedGroup
	bySuffix := map[string]*parsedGroup{}
	for _, kv := range orderedQuery(r.URL.RawQuery) {
		m := pattern.FindStringSubmatch(kv.key)
		if m == nil {
			continue
		}
		prefix, suffix := m[1], m[2]
		g := bySuffix[suffix]
		if g == nil {
			g = &parsedGroup{Group: candidates.Group{Suffix: suffix}}
			bySuffix[suffix] = g
			groups = append(groups, g)
		}
		switch prefix {
		case "resources":
			res, herr := parseResources(kv.value)
			if herr != nil {
				return nil, herr
			}
			g.Resources = g.Resources[:0]
			for _, ra := range res {
				g.Resources = append(g.Resources, candidates.Resource{Class: ra.Class, Amount: ra.Amount})
			}
			g.hasResources = len(g.Resources) > 0
		case "required":
			tq, herr := parseRequired(q["required"+suffix], r.mv)
			if herr != nil {
				return nil, herr
			}
			g.Required, g.Forbidden = tq.Required, tq.Forbidden
		case "member_of":
			aq, herr := parseMemberOf(q["member_of"+suffix], suffix, r.mv)
			if herr != nil {
				return nil, herr
			}
			g.MemberOf, g.ForbiddenAggs = aq.Required, aq.Forbidden
		case "in_tree":
			u, herr := parseInTree(kv.value)
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
func checkResourceless(groups []*parsedGroup, sets [][]string) *httpError {
	var resourceless []string
	for _, g := range groups {
		if !g.hasResources {
			resourceless = append(resourceless, g.Suffix)
		}
	}
	if len(resourceless) == len(groups) {
		return codedf(400, CodeQueryMissingValue, "There must be at least one resources or resources[$S] parameter.")
	}
	var inSubtree []string
	for _, set := range sets {
		for _, s := range set {
			inSubtree = appendUnique(inSubtree, s)
		}
	}
	var bad []string
	for _, s := range resourceless {
		if !slices.Contains(inSubtree, s) {
			bad = append(bad, s)
		}
	}
	if len(bad) > 0 {
		return codedf(400, CodeQueryBadValue, "Resourceless suffixed group request should be specified in `same_subtree` query param: bad group(s) - %s.", pyStrList(bad))
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
		return codedf(400, CodeQueryBadValue, "Real suffixes should be specified in `same_subtree`: %s not found in %s.", pyStrList(bad), pyStrList(all))
	}
	return nil
}

// checkOrphans is the pre-1.36 rule that every group has resources.
func checkOrphans(groups []*parsedGroup) *httpError {
	var orphans []string
	for _, g := range groups {
		if len(g.Required) > 0 && !g.hasResources {
			orphans = append(orphans, "required"+g.Suffix)
		}
	}
	if len(orphans) > 0 {
		return badRequest("All traits parameters must be associated with resources.  Found the following orphaned traits keys: %s", strings.Join(orphans, ", "))
	}
	for _, g := range groups {
		if !g.hasResources && (len(g.MemberOf) > 0 || len(g.ForbiddenAggs) > 0) {
			orphans = append(orphans, "member_of"+g.Suffix)
		}
	}
	if len(orphans) > 0 {
		return badRequest("All member_of parameters must be associated with resources. Found the following orphaned member_of keys: %s", strings.Join(orphans, ", "))
	}
	for _, g := range groups {
		if !g.hasResources {
			return badRequest("All request groups must specify resources.")
		}
	}
	if len(groups) == 0 {
		return badRequest("At least one request group (`resources` or `resources{$S}`) is required.")
	}
	return nil
}

// checkConflictingTraits rejects an any-of set whose every trait is also
// forbidden in the same group.
func checkConflictingTraits(groups []*parsedGroup) *httpError {
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
		return badRequest("Conflicting required and forbidden traits found in the following traits keys: %s", strings.Join(conflicts, ", "))
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
