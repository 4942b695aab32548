// Package query parses the Placement API's query-string parameters:
// required, forbidden and any-of traits, member_of, resources, in_tree and
// the request-wide parameters of allocation candidates. The accepted forms
// and the error texts are upstream's (placement/util.py normalize_*,
// placement/lib.py), because clients and the acceptance tests match on
// them; errors are 400 answers.
package query

import (
	"net/url"
	"strings"
)

// Values parses a raw query string as webob does for req.GET: blank
// values are kept and repeated keys keep every value in order. Malformed
// escapes are skipped rather than failing the whole request.
func Values(raw string) url.Values {
	q, _ := url.ParseQuery(raw)
	return q
}

// Pair is one key=value of a query string.
type Pair struct{ Key, Value string }

// Ordered splits a raw query string into pairs in their order, decoded as
// url.ParseQuery does (pairs that fail to decode are skipped), for
// parameters whose order decides which error upstream reports first.
func Ordered(raw string) []Pair {
	var out []Pair
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
		out = append(out, Pair{k, v})
	}
	return out
}

// Last is webob's MultiDict lookup: a repeated parameter's last value, ""
// when absent.
func Last(q url.Values, key string) string {
	vs := q[key]
	if len(vs) == 0 {
		return ""
	}
	return vs[len(vs)-1]
}

// AppendUnique appends the values of vs not already in dst.
func AppendUnique(dst []string, vs ...string) []string {
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
