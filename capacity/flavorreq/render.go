package flavorreq

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// Query renders the request as Nova's to_querystring does: every
// parameter, sorted by name then value, URL-encoded; limit is Nova's
// [scheduler] max_placement_results, 0 for none (a count wants them all).
func (r Request) Query(limit int) string {
	var params [][2]string
	if limit > 0 {
		params = append(params, [2]string{"limit", fmt.Sprint(limit)})
	}
	if r.GroupPolicy != "" {
		params = append(params, [2]string{"group_policy", r.GroupPolicy})
	}
	if root := traitList(r.RootRequired, r.RootForbidden); root != "" {
		params = append(params, [2]string{"root_required", root})
	}
	for _, g := range r.Groups {
		res := make([]string, 0, len(g.Resources))
		for _, x := range g.Resources {
			res = append(res, fmt.Sprintf("%s:%d", x.Class, x.Amount))
		}
		slices.Sort(res)
		params = append(params, [2]string{"resources" + g.Suffix, strings.Join(res, ",")})
		if req := traitList(g.Required, g.Forbidden); req != "" {
			params = append(params, [2]string{"required" + g.Suffix, req})
		}
	}
	slices.SortFunc(params, func(a, b [2]string) int {
		if c := strings.Compare(a[0], b[0]); c != 0 {
			return c
		}
		return strings.Compare(a[1], b[1])
	})
	parts := make([]string, len(params))
	for i, p := range params {
		parts[i] = url.QueryEscape(p[0]) + "=" + url.QueryEscape(p[1])
	}
	return strings.Join(parts, "&")
}

// traitList is "A,B,!C,!D": required sorted, then forbidden sorted.
func traitList(required, forbidden []string) string {
	vals := slices.Sorted(slices.Values(required))
	for _, t := range slices.Sorted(slices.Values(forbidden)) {
		vals = append(vals, "!"+t)
	}
	return strings.Join(vals, ",")
}
