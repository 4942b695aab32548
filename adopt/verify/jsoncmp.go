package verify

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// decode reads a JSON body with numbers kept as written (1.0 and 1 are
// different answers).
func decode(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// requestID, an error's request id, differs by design and is never
// compared.
const requestID = "request_id"

// canonical is v encoded with sorted keys and, arrays being sets, sorted
// elements.
func canonical(v any) string {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			if k != requestID {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		var sb strings.Builder
		sb.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				sb.WriteByte(',')
			}
			kb, _ := json.Marshal(k)
			sb.Write(kb)
			sb.WriteByte(':')
			sb.WriteString(canonical(x[k]))
		}
		sb.WriteByte('}')
		return sb.String()
	case []any:
		elems := make([]string, len(x))
		for i, e := range x {
			elems[i] = canonical(e)
		}
		slices.Sort(elems)
		return "[" + strings.Join(elems, ",") + "]"
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}

// differ collects the differences between two JSON values.
type differ struct {
	diffs []Diff
	path  string // the request
}

func (d *differ) add(where, ref, ours string) {
	d.diffs = append(d.diffs, Diff{Path: d.path, Where: where, Ref: ref, Ours: ours})
}

// walk compares ref and ours at where; arrays are compared as sets
// (Placement's orders of sets depend on the process and on ids).
func (d *differ) walk(where string, ref, ours any) {
	rm, rok := ref.(map[string]any)
	om, ook := ours.(map[string]any)
	if rok && ook {
		d.object(where, rm, om)
		return
	}
	ra, rok := ref.([]any)
	oa, ook := ours.([]any)
	if rok && ook {
		d.set(where, ra, oa)
		return
	}
	if rc, oc := canonical(ref), canonical(ours); rc != oc {
		d.add(where, short(rc), short(oc))
	}
}

func (d *differ) object(where string, r, o map[string]any) {
	keys := map[string]bool{}
	for k := range r {
		keys[k] = true
	}
	for k := range o {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		if k == requestID {
			continue
		}
		rv, rin := r[k]
		ov, oin := o[k]
		at := where + "." + k
		switch {
		case !oin:
			d.add(at, short(canonical(rv)), "absent")
		case !rin:
			d.add(at, "absent", short(canonical(ov)))
		default:
			d.walk(at, rv, ov)
		}
	}
}

// set reports the elements only one side has.
func (d *differ) set(where string, r, o []any) {
	count := map[string]int{}
	for _, e := range r {
		count[canonical(e)]++
	}
	for _, e := range o {
		count[canonical(e)]--
	}
	var onlyRef, onlyOurs []string
	for k, n := range count {
		for ; n > 0; n-- {
			onlyRef = append(onlyRef, k)
		}
		for ; n < 0; n++ {
			onlyOurs = append(onlyOurs, k)
		}
	}
	sort.Strings(onlyRef)
	sort.Strings(onlyOurs)
	for _, e := range onlyRef {
		d.add(where+"[]", short(e), "absent")
	}
	for _, e := range onlyOurs {
		d.add(where+"[]", "absent", short(e))
	}
}

// short keeps a value readable in a report line.
func short(s string) string {
	if len(s) > 200 {
		return s[:200] + fmt.Sprintf("… (%d bytes)", len(s))
	}
	return s
}
