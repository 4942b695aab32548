package difftest

import (
	"bytes"
	"fmt"
	"net/textproto"
	"net/url"
	"slices"
	"strings"
)

// ComparedHeaders are the response headers a client reads, compared by
// value (case-insensitively for tokens): the media type, where a created
// thing is, what a cache must key on, the microversion answered, and the
// methods a 405 allows. Last-Modified is compared by presence only (it is
// a time). Request ids differ by design and are not compared.
var ComparedHeaders = []string{"Content-Type", "Location", "Vary", "OpenStack-API-Version", "Cache-Control", "Allow"}

// Compare lists the differences between the reference's answer and ours
// (generated uuids in ours already mapped to the reference's) to a
// request. unlimited is the reference's answer to the same allocation
// candidates query without limit, when there is one.
func Compare(path string, ref, ours *Answer, unlimited *Answer) []Diff {
	var diffs []Diff
	if ref.Status != ours.Status {
		diffs = append(diffs, Diff{Kind: "status", Where: "", Ref: fmt.Sprint(ref.Status), Ours: fmt.Sprint(ours.Status)})
	}
	diffs = append(diffs, compareHeaders(ref, ours)...)
	return append(diffs, compareBodies(path, ref, ours, unlimited)...)
}

func headerValue(a *Answer, name string) (string, bool) {
	vs, ok := a.Header[textproto.CanonicalMIMEHeaderKey(name)]
	if !ok {
		return "", false
	}
	v := strings.Join(vs, ", ")
	switch name {
	case "Location":
		if u, err := url.Parse(v); err == nil {
			v = u.Path
		}
	case "Allow":
		parts := strings.Split(v, ",")
		for i := range parts {
			parts[i] = strings.TrimSpace(parts[i])
		}
		slices.Sort(parts)
		v = strings.Join(parts, ",")
	case "Content-Type", "Vary", "Cache-Control":
		v = strings.ToLower(strings.ReplaceAll(v, " ", ""))
	}
	return v, true
}

func compareHeaders(ref, ours *Answer) []Diff {
	var diffs []Diff
	show := func(v string, ok bool) string {
		if !ok {
			return "absent"
		}
		return fmt.Sprintf("%q", v)
	}
	for _, h := range ComparedHeaders {
		rv, rok := headerValue(ref, h)
		ov, ook := headerValue(ours, h)
		if rok != ook || rv != ov {
			diffs = append(diffs, Diff{Kind: "header", Where: strings.ToLower(h), Ref: show(rv, rok), Ours: show(ov, ook)})
		}
	}
	_, rok := headerValue(ref, "Last-Modified")
	_, ook := headerValue(ours, "Last-Modified")
	if rok != ook {
		diffs = append(diffs, Diff{Kind: "header", Where: "last-modified", What: "presence",
			Ref: fmt.Sprint(rok), Ours: fmt.Sprint(ook)})
	}
	return diffs
}

// compareBodies compares JSON structurally and anything else as text.
func compareBodies(path string, ref, ours *Answer, unlimited *Answer) []Diff {
	rv, rok := decodeJSON(ref.Body)
	ov, ook := decodeJSON(ours.Body)
	switch {
	case !rok && !ook:
		rt, ot := bytes.TrimSpace(ref.Body), bytes.TrimSpace(ours.Body)
		if !bytes.Equal(rt, ot) {
			return []Diff{{Kind: "body", Where: "text", Ref: short(string(rt)), Ours: short(string(ot))}}
		}
		return nil
	case rok != ook:
		return []Diff{{Kind: "body", Where: "$", What: "json-vs-text", Ref: short(string(ref.Body)), Ours: short(string(ours.Body))}}
	}
	df := &differ{skip: func(p []string, k string) bool { return k == "request_id" && len(p) == 2 && p[0] == ".errors" }}
	if strings.HasPrefix(path, "/allocation_candidates") && ref.Status == 200 && ours.Status == 200 {
		compareCandidates(df, path, rv, ov, unlimited)
		return df.diffs
	}
	df.walk(nil, "", rv, ov)
	return df.diffs
}

// compareCandidates compares allocation_requests as a set and
// provider_summaries as a map. A limited answer may pick other candidates
// than the reference does: it must have as many, each one a candidate of
// the unlimited answer, with summaries as the unlimited answer has them.
func compareCandidates(df *differ, path string, rv, ov any, unlimited *Answer) {
	r, rok := rv.(map[string]any)
	o, ook := ov.(map[string]any)
	if !rok || !ook {
		df.walk(nil, "", rv, ov)
		return
	}
	rARs, _ := r["allocation_requests"].([]any)
	oARs, _ := o["allocation_requests"].([]any)
	if sameMultiset(rARs, oARs) || unlimited == nil || !hasLimit(path) {
		df.setDiff([]string{".allocation_requests", "[*]"}, rARs, oARs)
		df.walk([]string{".provider_summaries"}, "provider_summaries", r["provider_summaries"], o["provider_summaries"])
		df.walkRest(r, o, "allocation_requests", "provider_summaries")
		return
	}
	uv, _ := decodeJSON(unlimited.Body)
	u, _ := uv.(map[string]any)
	uARs, _ := u["allocation_requests"].([]any)
	if len(rARs) != len(oARs) {
		df.add([]string{".allocation_requests"}, "ac-limit count", len(rARs), len(oARs))
	}
	known := map[string]bool{}
	for _, a := range uARs {
		known[canonical(a)] = true
	}
	for _, a := range oARs {
		if !known[canonical(a)] {
			df.add([]string{".allocation_requests", "[*]"}, "ac-limit not-a-candidate", nil, a)
		}
	}
	uSums, _ := u["provider_summaries"].(map[string]any)
	oSums, _ := o["provider_summaries"].(map[string]any)
	for k, v := range oSums {
		if uv, ok := uSums[k]; !ok || canonical(uv) != canonical(v) {
			df.add([]string{".provider_summaries", ".{uuid}"}, "ac-limit not-a-summary", uSums[k], v)
		}
	}
	df.walkRest(r, o, "allocation_requests", "provider_summaries")
}

// walkRest compares the keys of two objects other than those named.
func (df *differ) walkRest(r, o map[string]any, except ...string) {
	rr, oo := map[string]any{}, map[string]any{}
	for k, v := range r {
		if !slices.Contains(except, k) {
			rr[k] = v
		}
	}
	for k, v := range o {
		if !slices.Contains(except, k) {
			oo[k] = v
		}
	}
	df.walkObject(nil, rr, oo)
}

func hasLimit(path string) bool {
	_, q, _ := strings.Cut(path, "?")
	v, err := url.ParseQuery(q)
	return err == nil && v.Has("limit")
}

// withoutLimit is an allocation candidates path with its limit dropped,
// the key of the unlimited answer.
func withoutLimit(path string) string {
	p, q, ok := strings.Cut(path, "?")
	if !ok {
		return path
	}
	var keep []string
	for _, kv := range strings.Split(q, "&") {
		if !strings.HasPrefix(kv, "limit=") {
			keep = append(keep, kv)
		}
	}
	return p + "?" + strings.Join(keep, "&")
}
