package difftest

import (
	"encoding/json"
	"maps"
	"slices"
)

// writeTarget is a route that takes a JSON body, and a valid body for it.
type writeTarget struct {
	method, path string
	lo           int
	body         func(mv int) map[string]any
}

// writeTargets lists the routes with bodies, each with a plausible body.
func (g *Generator) writeTargets() []writeTarget {
	u := g.rpOrRandom()
	gen := 0
	if p := g.m.rps[u]; p != nil {
		gen = p.Gen
	}
	c := g.pickConsumer()
	allocs := g.allocationFor()
	return []writeTarget{
		{"POST", "/resource_providers", 0, func(int) map[string]any { return map[string]any{"name": g.name("rp"), "uuid": g.uuid()} }},
		{"PUT", rpPath(u, ""), 0, func(int) map[string]any { return map[string]any{"name": g.name("rp")} }},
		{"POST", rpPath(u, "/inventories"), 0, func(int) map[string]any {
			return map[string]any{"resource_class": "VCPU", "total": 4, "resource_provider_generation": gen}
		}},
		{"PUT", rpPath(u, "/inventories"), 0, func(int) map[string]any {
			return map[string]any{"resource_provider_generation": gen, "inventories": g.invBody()}
		}},
		{"PUT", rpPath(u, "/inventories/VCPU"), 0, func(int) map[string]any {
			return map[string]any{"resource_provider_generation": gen, "total": 8}
		}},
		{"PUT", rpPath(u, "/aggregates"), 19, func(int) map[string]any {
			return map[string]any{"resource_provider_generation": gen, "aggregates": some(g, g.aggs, 2, false)}
		}},
		{"PUT", rpPath(u, "/traits"), 6, func(int) map[string]any {
			return map[string]any{"resource_provider_generation": gen, "traits": some(g, stdTraits, 2, false)}
		}},
		{"PUT", "/allocations/" + c.UUID, 12, func(mv int) map[string]any {
			b := map[string]any{"allocations": allocBody(mv, allocs)}
			g.consumerFields(mv, c, b)
			return b
		}},
		{"POST", "/allocations", 13, func(mv int) map[string]any {
			one := map[string]any{"allocations": allocBody(mv, allocs)}
			g.consumerFields(mv, c, one)
			return map[string]any{c.UUID: one}
		}},
		{"POST", "/resource_classes", 2, func(int) map[string]any { return map[string]any{"name": pick(g, customClasses)} }},
		{"PUT", "/resource_classes/CUSTOM_GOLD", 2, func(int) map[string]any { return map[string]any{"name": "CUSTOM_SILVER"} }},
		{"POST", "/reshaper", 30, func(int) map[string]any {
			return map[string]any{"inventories": map[string]any{u: map[string]any{
				"resource_provider_generation": gen, "inventories": g.invBody()}}, "allocations": map[string]any{}}
		}},
	}
}

var brokenBodies = []struct{ note, body string }{
	{"truncated", "{"}, {"syntax error", `{"name": }`}, {"array", "[]"}, {"number", "42"},
	{"string", `"just a string"`}, {"empty body", ""}, {"not utf-8", "\xff\xfe\x00bad"},
	{"trailing comma", `{"name": "x",}`}, {"single quotes", "{'name': 'single quotes'}"},
	{"huge exponent", `{"total": 1e400}`}, {"nested arrays", "[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]"},
	{"unknown key only", `{"a": 1}`}, {"null", "null"},
}

func kBadJSON(g *Generator) []builder {
	t := pick(g, g.writeTargets())
	b := pick(g, brokenBodies)
	r := req("bad_json", t.method, t.path, g.mv(t.lo), nil)
	r.Body, r.Note, r.Bad = b.body, b.note, true
	return once(r)
}

// kSchema sends a plausible body with one thing wrong: an unknown key, a
// missing key, or a value of the wrong type or range.
func kSchema(g *Generator) []builder {
	t := pick(g, g.writeTargets())
	mv := g.mvAtLeast(t.lo)
	body := t.body(mv)
	note := g.mutate(body, 0)
	r := req("schema", t.method, t.path, mv, body)
	r.Note, r.Bad = note, true
	return once(r)
}

var wrongValues = []any{nil, "", "x", -1, 0, 1.5, 2147483648, true, []any{}, map[string]any{}, []any{1}}

// mutate changes one thing in a body (recursing into objects) and says
// what.
func (g *Generator) mutate(body map[string]any, depth int) string {
	keys := slices.Sorted(maps.Keys(body))
	if len(keys) == 0 || g.chance(0.15) {
		body["unexpected"] = 1
		return "unknown key"
	}
	k := pick(g, keys)
	if sub, ok := body[k].(map[string]any); ok && depth < 4 && g.chance(0.6) {
		return g.mutate(sub, depth+1)
	}
	if g.chance(0.25) {
		delete(body, k)
		return "missing " + k
	}
	v := pick(g, wrongValues)
	body[k] = v
	b, _ := json.Marshal(v)
	return k + " = " + string(b)
}

// kWrongGeneration writes with a stale or future generation.
func kWrongGeneration(g *Generator) []builder {
	p := g.rp()
	if p == nil {
		return kScenario(g)
	}
	gen := p.Gen + 1 + g.intn(3)
	if p.Gen > 0 && g.chance(0.5) {
		gen = p.Gen - 1
	}
	var r *Request
	switch g.intn(3) {
	case 0:
		r = req("wrong_gen", "PUT", rpPath(p.UUID, "/inventories"), g.mv(0),
			map[string]any{"resource_provider_generation": gen, "inventories": g.invBody()})
	case 1:
		r = req("wrong_gen", "PUT", rpPath(p.UUID, "/traits"), g.mv(6),
			map[string]any{"resource_provider_generation": gen, "traits": some(g, stdTraits, 2, false)})
	default:
		r = req("wrong_gen", "PUT", rpPath(p.UUID, "/aggregates"), g.mv(19),
			map[string]any{"resource_provider_generation": gen, "aggregates": some(g, g.aggs, 2, false)})
	}
	r.Bad = true
	return once(r)
}

// kUnknownIDs addresses things that do not exist or cannot.
func kUnknownIDs(g *Generator) []builder {
	id := pick(g, []string{g.uuid(), "not-a-uuid", "%20", "UPPER-" + g.uuid()[:8], "ZZZZZZZZ-0000-0000-0000-000000000000"})
	paths := []struct {
		method, path string
		lo           int
	}{
		{"GET", rpPath(id, ""), 0}, {"DELETE", rpPath(id, ""), 0}, {"GET", rpPath(id, "/inventories"), 0},
		{"GET", rpPath(id, "/traits"), 6}, {"GET", rpPath(id, "/aggregates"), 1}, {"GET", rpPath(id, "/allocations"), 0},
		{"GET", "/allocations/" + id, 0}, {"DELETE", "/allocations/" + id, 0}, {"GET", "/resource_classes/" + id, 2},
		{"GET", "/traits/" + id, 6}, {"GET", rpPath(id, "/inventories/VCPU"), 0}, {"GET", rpPath(id, "/usages"), 0},
	}
	p := pick(g, paths)
	r := req("weird_ids", p.method, p.path, g.mv(p.lo), nil)
	r.Bad = true
	return once(r)
}
