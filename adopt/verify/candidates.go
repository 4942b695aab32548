package verify

import (
	"net/url"
	"sort"
	"strings"
)

// provider is what the candidate queries are built from, as the
// reference answered.
type provider struct {
	uuid, root string
	classes    []string
	traits     []string
	aggregates []string
}

// indexOf gathers each provider's classes, traits and aggregates from the
// walked answers.
func indexOf(uuids []string, provs map[string]bodies) []provider {
	out := make([]provider, 0, len(uuids))
	for _, u := range uuids {
		base := "/resource_providers/" + u
		p := provider{uuid: u}
		if m, ok := provs[base].ref.(map[string]any); ok {
			p.root, _ = m["root_provider_uuid"].(string)
		}
		p.classes = keys(provs[base+"/inventories"].ref, "inventories")
		sort.Strings(p.classes)
		p.traits = strings1(provs[base+"/traits"].ref, "traits")
		p.aggregates = strings1(provs[base+"/aggregates"].ref, "aggregates")
		out = append(out, p)
	}
	return out
}

// strings1 is the string array body[name], sorted.
func strings1(body any, name string) []string {
	m, _ := body.(map[string]any)
	items, _ := m[name].([]any)
	var out []string
	for _, it := range items {
		if s, ok := it.(string); ok {
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

// maxEach bounds how many classes, traits, aggregates and trees get a
// query of their own.
const maxEach = 8

// candidateQueries builds allocation candidate queries that touch what
// the data holds: each class alone, the usual compute request, required
// and forbidden traits, aggregates, granular groups, trees and root
// traits. Their answers are compared as sets, so no limit is asked.
func candidateQueries(provs []provider) []string {
	q := &queries{set: map[string]bool{}}
	classes, traitClass, aggClass := map[string]bool{}, map[string]string{}, map[string]string{}
	for _, p := range provs {
		for _, c := range p.classes {
			classes[c] = true
		}
		if len(p.classes) == 0 {
			continue
		}
		for _, t := range p.traits {
			if _, ok := traitClass[t]; !ok && strings.HasPrefix(t, "CUSTOM_") {
				traitClass[t] = p.classes[0]
			}
		}
		for _, a := range p.aggregates {
			if _, ok := aggClass[a]; !ok {
				aggClass[a] = p.classes[0]
			}
		}
	}
	for _, c := range first(sortedKeys(classes), maxEach) {
		q.add("resources", c+":1")
	}
	if classes["VCPU"] && classes["MEMORY_MB"] {
		compute := "VCPU:1,MEMORY_MB:256"
		if classes["DISK_GB"] {
			compute += ",DISK_GB:1"
		}
		q.add("resources", compute)
		q.add("resources1", "VCPU:1", "resources2", "MEMORY_MB:256", "group_policy", "none")
		q.add("resources1", "VCPU:1", "resources2", "MEMORY_MB:256", "group_policy", "isolate")
	}
	for _, t := range first(sortedKeys(traitClass), maxEach) {
		q.add("resources", traitClass[t]+":1", "required", t)
		q.add("resources", traitClass[t]+":1", "required", "!"+t)
		q.add("resources", traitClass[t]+":1", "root_required", t)
	}
	for _, a := range first(sortedKeys(aggClass), maxEach) {
		q.add("resources", aggClass[a]+":1", "member_of", a)
		q.add("resources", aggClass[a]+":1", "member_of", "!"+a)
	}
	q.trees(provs)
	out := sortedKeys(q.set)
	return out
}

// queries is a set of candidate request paths.
type queries struct{ set map[string]bool }

// add records the query of the given key, value pairs (in that order).
func (q *queries) add(kv ...string) {
	parts := make([]string, 0, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		parts = append(parts, url.QueryEscape(kv[i])+"="+url.QueryEscape(kv[i+1]))
	}
	q.set["/allocation_candidates?"+strings.Join(parts, "&")] = true
}

// trees adds, for the first nested trees, a request confined to each
// (in_tree) and one spread over two of its providers' classes.
func (q *queries) trees(provs []provider) {
	byRoot := map[string][]provider{}
	for _, p := range provs {
		if p.root != "" {
			byRoot[p.root] = append(byRoot[p.root], p)
		}
	}
	n := 0
	for _, root := range sortedKeys(byRoot) {
		members := byRoot[root]
		if len(members) < 2 || n >= maxEach {
			continue
		}
		n++
		var cls []string
		for _, m := range members {
			if len(m.classes) > 0 {
				cls = append(cls, m.classes[len(m.classes)-1])
			}
		}
		if len(cls) == 0 {
			continue
		}
		q.add("resources", cls[0]+":1", "in_tree", root)
		if len(cls) > 1 && cls[0] != cls[1] {
			q.add("resources", cls[0]+":1,"+cls[1]+":1")
			q.add("resources_A", cls[0]+":1", "resources_B", cls[1]+":1", "group_policy", "none", "same_subtree", "_A,_B")
		}
	}
}

func first(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
