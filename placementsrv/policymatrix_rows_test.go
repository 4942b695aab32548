package placementsrv_test

import (
	"fmt"
	"net/http"
)

// The policy matrix's rows: every method and path of the route table,
// each with a minimal valid request at 1.39 and the status it answers
// when the policy allows it. A request that changes something acts on an
// object of its own (made by the world's admin just before), so that no
// outcome depends on the order of the requests.

// Expected outcomes, per mode in modes() order (8.0.0 default, 8.0.0
// secure, 15.0.0 default, 15.0.0 legacy), one character per caller in
// callers() order (project admin, member, reader, service, system admin,
// system reader, the admin user): + allowed, - refused with 403.
const (
	// 8.0.0's system_admin_api rules; 15.0.0's admin_or_service_api.
	wantAdmin = "+---+-+ ----+-- +--+--+ +--++-+"
	// 8.0.0's system_reader_api rules; 15.0.0's admin_or_service_api.
	wantReader = "+---+++ ----++- +--+--+ +--++-+"
	// 8.0.0's system_admin_api; 15.0.0's service_api.
	wantReshape = "+---+-+ ----+-- ---+--- +--++-+"
	// Total usages of the readers' own project: 8.0.0's
	// system_or_project_reader, 15.0.0's
	// admin_or_project_reader_or_service_api, both with that project as
	// the target.
	wantUsagesOwn = "+++-+++ +++-++- ++++--+ +++++-+"
	// Total usages of another project.
	wantUsagesOther = "+---+++ ----++- +--+--+ +--++-+"
	// Total usages with no project named: the target's project_id is
	// None, which oslo.policy compares as the string "None" with the
	// caller's, also None for a system-scoped one, so that 15.0.0's
	// project reader rule lets the system reader through in legacy mode.
	wantUsagesNone = "+---+++ ----++- +--+--+ +--++++"
	// The root is not authorized at all.
	wantOpen = "+++++++ +++++++ +++++++ +++++++"
)

// Objects every row may rely on, made by the world's admin first.
const (
	worldRP       = "0a0a0a0a-1111-4222-8333-000000000001"
	worldConsumer = "0a0a0a0a-1111-4222-8333-0000000000c0"
	worldName     = "CUSTOM_MATRIX"
	worldAgg      = "0a0a0a0a-1111-4222-8333-0000000000a0"
	otherProject  = "p9"
)

// req is one request of a row: a path with its query, and a JSON body.
type req struct {
	path string
	body any
}

// matrixRow is one method and route of the API.
type matrixRow struct {
	method, route string
	want          string
	ok            int
	// build returns the request for caller number c of row number r,
	// making the objects it changes first.
	build func(w *world, r, c int) req
}

func at(path string) func(*world, int, int) req {
	return func(*world, int, int) req { return req{path: path} }
}

// ownUUID names the object of row r and caller c, the same on every
// server.
func ownUUID(r, c int) string { return fmt.Sprintf("0b0b0b0b-%04x-4000-8000-%012x", r, c) }

// ownName is a custom resource class or trait name of row r and caller c.
func ownName(prefix string, r, c int) string { return fmt.Sprintf("CUSTOM_%s_R%dC%d", prefix, r, c) }

// ownRP makes a provider of its own for row r, caller c; with inventory,
// it has 4 VCPU (generation 1).
func ownRP(w *world, r, c int, inventory bool) string {
	u := ownUUID(r, c)
	w.admin(http.StatusOK, "POST", "/resource_providers", map[string]any{"name": "own-" + u, "uuid": u})
	if inventory {
		w.admin(http.StatusOK, "PUT", "/resource_providers/"+u+"/inventories",
			map[string]any{"resource_provider_generation": 0, "inventories": map[string]any{"VCPU": map[string]any{"total": 4}}})
	}
	return u
}

// allocation is a 1.39 allocation of one VCPU of the world's provider.
func allocation() map[string]any {
	return map[string]any{
		"allocations":         map[string]any{worldRP: map[string]any{"resources": map[string]int{"VCPU": 1}}},
		"project_id":          "p1",
		"user_id":             "u1",
		"consumer_generation": nil,
		"consumer_type":       "INSTANCE",
	}
}

func matrixRows() []matrixRow {
	rp := "/resource_providers/" + worldRP
	return append(append(classAndProviderRows(rp), inventoryRows(rp)...), otherRows(rp)...)
}

func classAndProviderRows(rp string) []matrixRow {
	return []matrixRow{
		{"GET", "/", wantOpen, 200, at("/")},
		{"GET", "/resource_classes", wantReader, 200, at("/resource_classes")},
		{"POST", "/resource_classes", wantAdmin, 201, func(_ *world, r, c int) req {
			return req{"/resource_classes", map[string]any{"name": ownName("NEW", r, c)}}
		}},
		{"GET", "/resource_classes/{name}", wantReader, 200, at("/resource_classes/" + worldName)},
		{"PUT", "/resource_classes/{name}", wantAdmin, 201, func(_ *world, r, c int) req {
			return req{path: "/resource_classes/" + ownName("PUT", r, c)}
		}},
		{"DELETE", "/resource_classes/{name}", wantAdmin, 204, func(w *world, r, c int) req {
			n := ownName("DEL", r, c)
			w.admin(http.StatusCreated, "PUT", "/resource_classes/"+n, nil)
			return req{path: "/resource_classes/" + n}
		}},
		{"GET", "/resource_providers", wantReader, 200, at("/resource_providers")},
		{"POST", "/resource_providers", wantAdmin, 200, func(_ *world, r, c int) req {
			return req{"/resource_providers", map[string]any{"name": "new-" + ownUUID(r, c)}}
		}},
		{"GET", "/resource_providers/{uuid}", wantReader, 200, at(rp)},
		{"DELETE", "/resource_providers/{uuid}", wantAdmin, 204, func(w *world, r, c int) req {
			return req{path: "/resource_providers/" + ownRP(w, r, c, false)}
		}},
		{"PUT", "/resource_providers/{uuid}", wantAdmin, 200, func(w *world, r, c int) req {
			return req{"/resource_providers/" + ownRP(w, r, c, false), map[string]any{"name": "renamed-" + ownUUID(r, c)}}
		}},
	}
}

func inventoryRows(rp string) []matrixRow {
	vcpu := map[string]any{"VCPU": map[string]any{"total": 4}}
	return []matrixRow{
		{"GET", "/resource_providers/{uuid}/inventories", wantReader, 200, at(rp + "/inventories")},
		{"POST", "/resource_providers/{uuid}/inventories", wantAdmin, 201, func(w *world, r, c int) req {
			return req{"/resource_providers/" + ownRP(w, r, c, false) + "/inventories", map[string]any{"resource_class": "VCPU", "total": 4}}
		}},
		{"PUT", "/resource_providers/{uuid}/inventories", wantAdmin, 200, func(w *world, r, c int) req {
			return req{"/resource_providers/" + ownRP(w, r, c, false) + "/inventories",
				map[string]any{"resource_provider_generation": 0, "inventories": vcpu}}
		}},
		{"DELETE", "/resource_providers/{uuid}/inventories", wantAdmin, 204, func(w *world, r, c int) req {
			return req{path: "/resource_providers/" + ownRP(w, r, c, true) + "/inventories"}
		}},
		{"GET", "/resource_providers/{uuid}/inventories/{resource_class}", wantReader, 200, at(rp + "/inventories/VCPU")},
		{"PUT", "/resource_providers/{uuid}/inventories/{resource_class}", wantAdmin, 200, func(w *world, r, c int) req {
			return req{"/resource_providers/" + ownRP(w, r, c, true) + "/inventories/VCPU",
				map[string]any{"resource_provider_generation": 1, "total": 5}}
		}},
		{"DELETE", "/resource_providers/{uuid}/inventories/{resource_class}", wantAdmin, 204, func(w *world, r, c int) req {
			return req{path: "/resource_providers/" + ownRP(w, r, c, true) + "/inventories/VCPU"}
		}},
		{"GET", "/resource_providers/{uuid}/usages", wantReader, 200, at(rp + "/usages")},
		{"GET", "/resource_providers/{uuid}/aggregates", wantReader, 200, at(rp + "/aggregates")},
		{"PUT", "/resource_providers/{uuid}/aggregates", wantAdmin, 200, func(w *world, r, c int) req {
			return req{"/resource_providers/" + ownRP(w, r, c, false) + "/aggregates",
				map[string]any{"aggregates": []string{worldAgg}, "resource_provider_generation": 0}}
		}},
		{"GET", "/resource_providers/{uuid}/allocations", wantReader, 200, at(rp + "/allocations")},
	}
}

func otherRows(rp string) []matrixRow {
	return []matrixRow{
		{"POST", "/allocations", wantAdmin, 204, func(_ *world, r, c int) req {
			return req{"/allocations", map[string]any{ownUUID(r, c): allocation()}}
		}},
		{"GET", "/allocations/{consumer_uuid}", wantReader, 200, at("/allocations/" + worldConsumer)},
		{"PUT", "/allocations/{consumer_uuid}", wantAdmin, 204, func(_ *world, r, c int) req {
			return req{"/allocations/" + ownUUID(r, c), allocation()}
		}},
		{"DELETE", "/allocations/{consumer_uuid}", wantAdmin, 204, func(w *world, r, c int) req {
			w.admin(http.StatusNoContent, "PUT", "/allocations/"+ownUUID(r, c), allocation())
			return req{path: "/allocations/" + ownUUID(r, c)}
		}},
		{"GET", "/allocation_candidates", wantReader, 200, at("/allocation_candidates?resources=VCPU:1")},
		{"GET", "/traits", wantReader, 200, at("/traits")},
		{"GET", "/traits/{name}", wantReader, 204, at("/traits/" + worldName)},
		{"PUT", "/traits/{name}", wantAdmin, 201, func(_ *world, r, c int) req {
			return req{path: "/traits/" + ownName("PUT", r, c)}
		}},
		{"DELETE", "/traits/{name}", wantAdmin, 204, func(w *world, r, c int) req {
			n := ownName("DEL", r, c)
			w.admin(http.StatusCreated, "PUT", "/traits/"+n, nil)
			return req{path: "/traits/" + n}
		}},
		{"GET", "/resource_providers/{uuid}/traits", wantReader, 200, at(rp + "/traits")},
		{"PUT", "/resource_providers/{uuid}/traits", wantAdmin, 200, func(w *world, r, c int) req {
			return req{"/resource_providers/" + ownRP(w, r, c, false) + "/traits",
				map[string]any{"traits": []string{worldName}, "resource_provider_generation": 0}}
		}},
		{"DELETE", "/resource_providers/{uuid}/traits", wantAdmin, 204, func(w *world, r, c int) req {
			return req{path: "/resource_providers/" + ownRP(w, r, c, false) + "/traits"}
		}},
		{"GET", "/usages", wantUsagesOwn, 200, at("/usages?project_id=p1")},
		{"GET", "/usages", wantUsagesOther, 200, at("/usages?project_id=" + otherProject)},
		// No project asked: authorized, then refused as a bad query.
		{"GET", "/usages", wantUsagesNone, 400, at("/usages")},
		{"POST", "/reshaper", wantReshape, 204, func(w *world, r, c int) req {
			u := ownRP(w, r, c, false)
			return req{"/reshaper", map[string]any{"allocations": map[string]any{}, "inventories": map[string]any{
				u: map[string]any{"resource_provider_generation": 0, "inventories": map[string]any{"VCPU": map[string]any{"total": 4}}}}}}
		}},
	}
}
