package difftest

import (
	"fmt"

	"github.com/placement-syncd/placement-syncd/microversion"
)

// readPaths are GET routes to send protocol errors to.
func (g *Generator) readPaths() []string {
	u := g.rpOrRandom()
	return []string{"/", "/resource_providers", rpPath(u, ""), rpPath(u, "/inventories"), "/traits",
		"/resource_classes", "/allocation_candidates?resources=VCPU:1", "/usages?project_id=proj-a",
		rpPath(u, "/aggregates"), "/allocations/" + g.uuid()}
}

var versionHeaders = []string{"placement 1", "placement abc", "placement 1.40", "placement 2.0",
	"placement 0.9", "placement 1.-1", "placement -1.5", "placement 1.5.1", "placement LATEST",
	"placement latest", "PLACEMENT 1.10", "placement 01.10", "placement 1.39 ", "placement",
	"", "compute 2.1,placement 1.25", "placement 1.5, compute 2.1", "compute 2.1", "placement 1.0"}

func kBadVersion(g *Generator) []builder {
	r := req("bad_mvhdr", "GET", pick(g, g.readPaths()), -1, nil)
	if g.chance(0.15) {
		r.Headers = map[string]*string{legacyVersionHeader: hv("placement " + microversion.Max.String())}
		r.Note = "legacy " + legacyVersionHeader
	} else {
		v := pick(g, versionHeaders)
		r.Headers = map[string]*string{"OpenStack-API-Version": hv(v)}
		r.Note = fmt.Sprintf("version header %q", v)
	}
	r.Bad = true
	return once(r)
}

// kWrongMethod sends a method a route does not have.
func kWrongMethod(g *Generator) []builder {
	u := g.rpOrRandom()
	cases := []struct{ method, path string }{
		{"POST", "/"}, {"DELETE", "/resource_providers"}, {"POST", rpPath(u, "")}, {"PATCH", rpPath(u, "")},
		{"POST", rpPath(u, "/usages")}, {"DELETE", rpPath(u, "/aggregates")}, {"POST", rpPath(u, "/aggregates")},
		{"PUT", rpPath(u, "/allocations")}, {"GET", "/allocations"}, {"POST", "/allocations/" + g.uuid()},
		{"POST", "/allocation_candidates"}, {"DELETE", "/traits"}, {"POST", "/traits/CUSTOM_X"},
		{"GET", "/reshaper"}, {"PUT", "/usages"}, {"POST", rpPath(u, "/traits")}, {"PATCH", "/resource_classes"},
		{"POST", rpPath(u, "/inventories/VCPU")}, {"HEAD", rpPath(u, "/allocations")}, {"HEAD", "/usages"},
		{"OPTIONS", "/resource_providers"},
	}
	c := pick(g, cases)
	r := req("wrong_method", c.method, c.path, g.mv(0), nil)
	r.Bad = true
	return once(r)
}

var accepts = []string{"application/xml", "text/html", "text/plain;q=1.0", "*/*", "application/*", "",
	"application/json;q=0.5, text/html", "application/json; charset=utf-8"}

func kBadAccept(g *Generator) []builder {
	a := pick(g, accepts)
	r := req("bad_accept", "GET", pick(g, g.readPaths()), g.mv(0), nil)
	r.Headers = map[string]*string{"Accept": hv(a)}
	r.Note = fmt.Sprintf("Accept %q", a)
	r.Bad = true
	return once(r)
}

var contentTypes = []string{"text/plain", "application/xml", "application/x-www-form-urlencoded", "",
	"application/json; charset=UTF-8", "application/JSON"}

func kBadContentType(g *Generator) []builder {
	t := pick(g, g.writeTargets())
	mv := g.mvAtLeast(t.lo)
	r := req("bad_ctype", t.method, t.path, mv, t.body(mv))
	if g.chance(0.2) {
		r.Headers = map[string]*string{"Content-Type": nil}
		r.Note = "content-type None"
	} else {
		ct := pick(g, contentTypes)
		r.Headers = map[string]*string{"Content-Type": hv(ct)}
		r.Note = fmt.Sprintf("content-type %q", ct)
	}
	r.Bad = true
	return once(r)
}

func kUnknownRoute(g *Generator) []builder {
	paths := []string{"/placement", "/resource_providers/" + g.uuid() + "/nothing", "/traits/a/b",
		"/v1/resource_providers", "/resource_provider", "//resource_providers", "/allocations/"}
	r := req("unknown_route", pick(g, []string{"GET", "POST", "PUT", "DELETE"}), pick(g, paths), g.mv(0), nil)
	r.Bad = true
	return once(r)
}

func kAuth(g *Generator) []builder {
	r := req("no_auth", "GET", pick(g, g.readPaths()), g.mv(0), nil)
	if g.chance(0.5) {
		r.Headers = map[string]*string{"X-Auth-Token": nil}
	} else {
		tok := pick(g, []string{"someone", "reader:proj-a", ""})
		r.Gen, r.Note = "non_admin", fmt.Sprintf("token %q", tok)
		r.Headers = map[string]*string{"X-Auth-Token": hv(tok)}
		if g.chance(0.3) {
			r.Method, r.Path = "DELETE", rpPath(g.rpOrRandom(), "")
		}
	}
	r.Bad = true
	return once(r)
}

// kHuge sends numbers at and past the 32-bit and 64-bit limits.
func kHuge(g *Generator) []builder {
	n := pick(g, []int64{2147483647, 2147483648, 9007199254740992, 9223372036854775807})
	var r *Request
	u := ""
	switch p := g.rp(); {
	case p == nil || g.chance(0.3):
		r = req("huge", "GET", fmt.Sprintf("/allocation_candidates?resources=VCPU%%3A%d&limit=%d", n, n), g.mv(16), nil)
	case g.chance(0.5):
		u = p.UUID
		r = req("huge", "PUT", rpPath(p.UUID, "/inventories"), g.mv(0), map[string]any{
			"resource_provider_generation": p.Gen, "inventories": map[string]any{"DISK_GB": map[string]any{"total": n}}})
	default:
		r = req("huge", "PUT", rpPath(p.UUID, "/traits"), g.mv(6),
			map[string]any{"resource_provider_generation": n, "traits": []string{}})
	}
	r.Note, r.Bad = fmt.Sprint("number ", n), true
	r.observe = func(a *Answer) {
		if a.Status == 200 && u != "" {
			g.m.learnInventories(u, a.Body)
		}
	}
	return once(r)
}

// badKinds are the deliberately wrong requests.
func badKinds() []kind {
	return []kind{
		{"bad_json", 3, kBadJSON},
		{"schema", 4, kSchema},
		{"wrong_gen", 2, kWrongGeneration},
		{"weird_ids", 3, kUnknownIDs},
		{"bad_mvhdr", 2, kBadVersion},
		{"wrong_method", 2, kWrongMethod},
		{"bad_accept", 1, kBadAccept},
		{"bad_ctype", 1, kBadContentType},
		{"unknown_route", 1, kUnknownRoute},
		{"auth", 1, kAuth},
		{"huge", 1, kHuge},
	}
}
