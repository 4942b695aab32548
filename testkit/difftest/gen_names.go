package difftest

import (
	"slices"
	"strings"
)

// kResourceClasses lists, creates, reads, updates and deletes resource
// classes (1.2+; PUT creates from 1.7, renames before).
func kResourceClasses(g *Generator) []builder {
	name := pick(g, append(slices.Clone(customClasses), g.m.classes...))
	if g.chance(0.15) {
		name = pick(g, []string{"VCPU", "custom_lower", "CUSTOM_" + strings.Repeat("Y", 260), "CUSTOM_BAD-NAME"})
	}
	path := "/resource_classes/" + name
	switch g.intn(5) {
	case 0:
		return once(req("list_rcs", "GET", "/resource_classes", g.mv(2), nil))
	case 1:
		return once(req("get_rc", "GET", path, g.mv(2), nil))
	case 2:
		r := req("post_rc", "POST", "/resource_classes", g.mv(2), map[string]any{"name": name})
		r.observe = func(a *Answer) {
			if a.Status == 201 {
				g.m.classes = addName(g.m.classes, name)
			}
		}
		return once(r)
	case 3:
		return once(g.putResourceClass(name, path))
	}
	r := req("del_rc", "DELETE", path, g.mv(2), nil)
	r.observe = func(a *Answer) {
		if a.Status == 204 {
			g.m.classes = dropName(g.m.classes, name)
		}
	}
	return once(r)
}

func (g *Generator) putResourceClass(name, path string) *Request {
	mv := g.mv(2)
	if mv >= 7 || mv < 2 {
		r := req("put_rc", "PUT", path, mv, nil)
		r.observe = func(a *Answer) {
			if a.Status == 201 || a.Status == 204 {
				g.m.classes = addName(g.m.classes, name)
			}
		}
		return r
	}
	to := pick(g, customClasses)
	r := req("put_rc", "PUT", path, mv, map[string]any{"name": to})
	r.Note = "rename"
	r.observe = func(a *Answer) {
		if a.Status == 200 {
			g.m.classes = addName(dropName(g.m.classes, name), to)
		}
	}
	return r
}

// kTraits lists, reads, creates and deletes traits (1.6+).
func kTraits(g *Generator) []builder {
	name := pick(g, append(slices.Clone(customTraits), g.m.traits...))
	if g.chance(0.15) {
		name = pick(g, []string{"HW_CPU_X86_AVX2", "CUSTOM_lower", "CUSTOM_" + strings.Repeat("T", 260), "NOT_A_TRAIT"})
	}
	path := "/traits/" + name
	switch g.intn(4) {
	case 0:
		mv := g.mv(6)
		var kv []string
		switch g.intn(4) {
		case 0:
			kv = append(kv, "name", "in:"+strings.Join(some(g, g.traitPool(), 3, true), ","))
		case 1:
			kv = append(kv, "name", "startswith:"+pick(g, []string{"CUSTOM", "HW_", "STORAGE", "x"}))
		case 2:
			kv = append(kv, "associated", pick(g, []string{"true", "false", "maybe"}))
		}
		p := "/traits"
		if q := query(kv...); q != "" {
			p += "?" + q
		}
		return once(req("list_traits", "GET", p, mv, nil))
	case 1:
		return once(req("get_trait", "GET", path, g.mv(6), nil))
	case 2:
		r := req("put_trait", "PUT", path, g.mv(6), nil)
		r.observe = func(a *Answer) {
			if (a.Status == 201 || a.Status == 204) && strings.HasPrefix(name, "CUSTOM_") {
				g.m.traits = addName(g.m.traits, name)
			}
		}
		return once(r)
	}
	r := req("del_trait", "DELETE", path, g.mv(6), nil)
	r.observe = func(a *Answer) {
		if a.Status == 204 {
			g.m.traits = dropName(g.m.traits, name)
		}
	}
	return once(r)
}

func kRoot(g *Generator) []builder { return once(req("root", "GET", "/", g.mv(0), nil)) }

func addName(xs []string, n string) []string {
	if slices.Contains(xs, n) {
		return xs
	}
	return append(xs, n)
}

func dropName(xs []string, n string) []string {
	return slices.DeleteFunc(slices.Clone(xs), func(s string) bool { return s == n })
}

// validKinds are the requests that follow the model.
func validKinds() []kind {
	return []kind{
		{"scenario", 8, kScenario},
		{"create_rp", 4, kCreateRP},
		{"update_rp", 3, kUpdateRP},
		{"delete_rp", 2, kDeleteRP},
		{"get_rp", 2, kGetRP},
		{"list_rps", 4, kListRPs},
		{"inventories", 8, kInventories},
		{"rp_traits", 4, kRPTraits},
		{"aggregates", 3, kAggregates},
		{"usages", 3, kUsages},
		{"put_allocs", 6, kPutAllocs},
		{"post_allocs", 3, kPostAllocs},
		{"consumer", 4, kConsumerReads},
		{"reshaper", 2, kReshape},
		{"resource_classes", 3, kResourceClasses},
		{"traits", 3, kTraits},
		{"ac", 12, kAllocationCandidates},
		{"root", 1, kRoot},
		{"over_capacity", 2, kOverCapacity},
	}
}
