package difftest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// Diff is one difference between the reference's answer and ours.
type Diff struct {
	Kind  string // status, header or body
	Where string // the header, or the JSON path with uuids, classes and indexes generalized
	What  string // the class of difference: value, missing-key, extra-key, number-format, ...
	Ref   string // the reference's value, shortened
	Ours  string // ours, shortened
}

// Class is the diff without its values: what mismatches are grouped by.
func (d Diff) Class() string {
	s := d.Kind + " " + d.Where
	if d.What != "" {
		s += " " + d.What
	}
	return s
}

func (d Diff) String() string {
	return fmt.Sprintf("%s: ref %s, ours %s", d.Class(), d.Ref, d.Ours)
}

var uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$`)

// decodeJSON decodes a body keeping numbers as written, with trait lists
// sorted.
func decodeJSON(b []byte) (any, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return nil, false
	}
	return normalize(v), true
}

// timestampRE matches the times a body may carry (an error detail that
// quotes a row's created_at, for one): they differ between any two runs.
var timestampRE = regexp.MustCompile(`\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?`)

// setLists are the keys whose lists are sets: the reference builds them
// from Python sets (or stores them in the order it iterated one), whose
// order changes with each process's string hash seed, so no order of
// theirs can be matched. Traits; a provider's aggregates (new ones are
// created in the order of a set of uuids); allocation candidates'
// pre-1.12 allocation lists; and each group's providers in mappings.
var setLists = map[string]bool{"traits": true, "aggregates": true, "allocations": true}

func sortSet(list []any) {
	slices.SortFunc(list, func(a, b any) int { return strings.Compare(canonical(a), canonical(b)) })
}

// normalize replaces timestamps in strings with <time> and sorts the
// lists that are sets (setLists, and the lists of "mappings").
func normalize(v any) any {
	switch x := v.(type) {
	case string:
		return timestampRE.ReplaceAllString(x, "<time>")
	case map[string]any:
		for k, e := range x {
			x[k] = normalize(e)
			if list, ok := x[k].([]any); ok && setLists[k] {
				sortSet(list)
			}
			if groups, ok := x[k].(map[string]any); ok && k == "mappings" {
				for _, g := range groups {
					if list, ok := g.([]any); ok {
						sortSet(list)
					}
				}
			}
		}
	case []any:
		for i, e := range x {
			x[i] = normalize(e)
		}
	}
	return v
}

// canonical is a value's JSON with sorted keys, for set comparisons.
func canonical(v any) string {
	b, err := json.Marshal(v) // maps marshal with sorted keys
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func short(v any) string {
	s, ok := v.(string)
	if !ok {
		s = canonical(v)
	} else {
		s = fmt.Sprintf("%q", s)
	}
	if len(s) > 160 {
		s = s[:157] + "..."
	}
	return s
}

// keyPath generalizes one object key under parent for grouping.
func keyPath(parent, k string) string {
	switch {
	case uuidRE.MatchString(k):
		return "{uuid}"
	case parent == "inventories" || parent == "resources" || parent == "usages" || parent == "capacity":
		return "{rc}"
	case parent == "mappings":
		return "{group}"
	}
	return k
}

// differ collects diffs of two decoded JSON values.
type differ struct {
	diffs []Diff
	skip  func(path []string, key string) bool // keys not compared (request ids)
}

func (df *differ) add(path []string, what string, ref, ours any) {
	df.diffs = append(df.diffs, Diff{Kind: "body", Where: "$" + strings.Join(path, ""), What: what,
		Ref: short(ref), Ours: short(ours)})
}

func (df *differ) walk(path []string, parent string, ref, ours any) {
	switch r := ref.(type) {
	case map[string]any:
		o, ok := ours.(map[string]any)
		if !ok {
			df.add(path, "type", ref, ours)
			return
		}
		df.walkObject(path, r, o)
	case []any:
		o, ok := ours.([]any)
		if !ok {
			df.add(path, "type", ref, ours)
			return
		}
		df.walkArray(path, parent, r, o)
	case json.Number:
		o, ok := ours.(json.Number)
		switch {
		case !ok:
			df.add(path, "type", ref, ours)
		case r == o:
		case sameNumber(r, o):
			df.add(path, "number-format", r.String(), o.String())
		default:
			df.add(path, "value", r.String(), o.String())
		}
	default:
		if ref != ours {
			what := "value"
			if fmt.Sprintf("%T", ref) != fmt.Sprintf("%T", ours) {
				what = "type"
			} else if s, ok := ref.(string); ok && len(path) > 0 && path[len(path)-1] == ".detail" {
				what += " [" + detailKind(s) + "]"
			}
			df.add(path, what, ref, ours)
		}
	}
}

// detailKind names an error detail by the first words of its specific
// part (after the status's generic sentence), so that different errors of
// one route group apart: "Malformed JSON", "Invalid microversion", ...
func detailKind(s string) string {
	if i := strings.LastIndex(s, "\n\n"); i >= 0 {
		s = s[i+2:]
	}
	s, _, _ = strings.Cut(s, ":")
	words := strings.Fields(s)
	return strings.TrimRight(strings.Join(words[:min(len(words), 4)], " "), ".,")
}

func sameNumber(a, b json.Number) bool {
	x, err1 := a.Float64()
	y, err2 := b.Float64()
	return err1 == nil && err2 == nil && x == y
}

func (df *differ) walkObject(path []string, r, o map[string]any) {
	parent := ""
	if len(path) > 0 {
		parent = strings.TrimPrefix(path[len(path)-1], ".")
	}
	keys := slices.Sorted(maps.Keys(r))
	for _, k := range slices.Sorted(maps.Keys(o)) {
		if _, ok := r[k]; !ok {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		if df.skip != nil && df.skip(path, k) {
			continue
		}
		p := append(slices.Clone(path), "."+keyPath(parent, k))
		rv, rok := r[k]
		ov, ook := o[k]
		switch {
		case !ook:
			df.add(p, "missing-key", k+"="+short(rv), nil)
		case !rok:
			df.add(p, "extra-key", nil, k+"="+short(ov))
		default:
			df.walk(p, k, rv, ov)
		}
	}
}

// walkArray compares element by element when the lengths agree, and as
// multisets otherwise (an element missing from a list shifts the rest).
func (df *differ) walkArray(path []string, parent string, r, o []any) {
	p := append(slices.Clone(path), "[*]")
	if len(r) == len(o) {
		if sameMultiset(r, o) && canonical(r) != canonical(o) {
			df.add(path, "order", r, o)
			return
		}
		for i := range r {
			df.walk(p, parent, r[i], o[i])
		}
		return
	}
	df.setDiff(p, r, o)
}

// setDiff reports the elements only one side has.
func (df *differ) setDiff(path []string, r, o []any) {
	count := map[string]int{}
	for _, v := range o {
		count[canonical(v)]++
	}
	for _, v := range r {
		k := canonical(v)
		if count[k] > 0 {
			count[k]--
			continue
		}
		df.add(path, "missing-item", v, nil)
	}
	for _, v := range o {
		k := canonical(v)
		if count[k] > 0 {
			count[k]--
			df.add(path, "extra-item", nil, v)
		}
	}
}

func sameMultiset(r, o []any) bool {
	a, b := make([]string, len(r)), make([]string, len(o))
	for i := range r {
		a[i] = canonical(r[i])
	}
	for i := range o {
		b[i] = canonical(o[i])
	}
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
