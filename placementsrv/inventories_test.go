package placementsrv

import (
	"context"
	"database/sql"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

const invTestRP = "7260669a-e3d4-4867-aaa7-683e2ab6958c"

// invEnv is a testServer with one provider.
type invEnv struct {
	t *testing.T
	*testServer
}

func newInvEnv(t *testing.T) *invEnv {
	t.Helper()
	e := &invEnv{t: t, testServer: startTestServer(t)}
	if _, err := e.Store.CreateProvider(context.Background(), store.NewProvider{UUID: invTestRP, Name: "rp"}); err != nil {
		t.Fatal(err)
	}
	return e
}

// restart reopens the database file, as after a process restart.
func (e *invEnv) restart() {
	e.t.Helper()
	e.testServer = e.testServer.restart(e.t)
}

// snapshot is the observable inventory state of the test provider plus
// the resource class list.
type invSnapshot struct {
	Inventories map[string]any
	Classes     []any
}

func (e *invEnv) snapshot() invSnapshot {
	e.t.Helper()
	r := e.do(e.t, call{Method: "GET", Path: "/resource_providers/" + invTestRP + "/inventories", Version: "1.39"})
	if r.Status != 200 {
		e.t.Fatalf("GET inventories: %d %s", r.Status, r.Body)
	}
	c := e.do(e.t, call{Method: "GET", Path: "/resource_classes", Version: "1.39"})
	if c.Status != 200 {
		e.t.Fatalf("GET resource classes: %d %s", c.Status, c.Body)
	}
	return invSnapshot{Inventories: r.JSON(e.t), Classes: c.JSON(e.t)["resource_classes"].([]any)}
}

// invWantError checks Placement's error document.
func invWantError(t *testing.T, r testResponse, status int, detail string) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d: %s", r.Status, status, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("content type %q", ct)
	}
	var doc struct {
		Errors []struct {
			Status int    `json:"status"`
			Title  string `json:"title"`
			Detail string `json:"detail"`
		} `json:"errors"`
	}
	if err := json.Unmarshal(r.Body, &doc); err != nil || len(doc.Errors) != 1 {
		t.Fatalf("not an error document: %v %s", err, r.Body)
	}
	if doc.Errors[0].Status != status || doc.Errors[0].Title != http.StatusText(status) {
		t.Fatalf("error item %+v", doc.Errors[0])
	}
	if !strings.Contains(doc.Errors[0].Detail, detail) {
		t.Fatalf("detail %q does not contain %q", doc.Errors[0].Detail, detail)
	}
}

// invErrorCode returns the code of an error document.
func invErrorCode(t *testing.T, r testResponse) string {
	t.Helper()
	errs, _ := r.JSON(t)["errors"].([]any)
	if len(errs) != 1 {
		t.Fatalf("not an error document: %s", r.Body)
	}
	code, _ := errs[0].(map[string]any)["code"].(string)
	return code
}

const invRPPath = "/resource_providers/" + invTestRP

// invBadInputCases are requests each route must refuse with a 400; they
// also seed FuzzDecodeInventories.
var invBadInputCases = []struct {
	name, method, path, version, body, detail string
}{
	// POST one inventory.
	{"post malformed json", "POST", invRPPath + "/inventories", "1.39", `{"resource_class": "VCPU", "total": }`, "Malformed JSON"},
	{"post empty body", "POST", invRPPath + "/inventories", "1.39", ` `, "Malformed JSON"},
	{"post not an object", "POST", invRPPath + "/inventories", "1.39", `[1]`, "JSON does not validate"},
	{"post total as string", "POST", invRPPath + "/inventories", "1.39", `{"resource_class": "VCPU", "total": "8"}`, "'8' is not of type 'integer'"},
	{"post total as float", "POST", invRPPath + "/inventories", "1.39", `{"resource_class": "VCPU", "total": 8.5}`, "8.5 is not of type 'integer'"},
	{"post unknown property", "POST", invRPPath + "/inventories", "1.39", `{"resource_class": "VCPU", "total": 8, "color": "red"}`, "Additional properties are not allowed ('color' was unexpected)"},
	{"post missing total", "POST", invRPPath + "/inventories", "1.39", `{"resource_class": "VCPU"}`, "'total' is a required property"},
	{"post zero total", "POST", invRPPath + "/inventories", "1.39", `{"resource_class": "VCPU", "total": 0}`, "0 is less than the minimum of 1"},
	{"post negative reserved", "POST", invRPPath + "/inventories", "1.39", `{"resource_class": "VCPU", "total": 8, "reserved": -1}`, "-1 is less than the minimum of 0"},
	{"post total over max", "POST", invRPPath + "/inventories", "1.39", `{"resource_class": "VCPU", "total": 2147483648}`, "Failed validating 'maximum'"},
	{"post zero step", "POST", invRPPath + "/inventories", "1.39", `{"resource_class": "VCPU", "total": 8, "step_size": 0}`, "Failed validating 'minimum' in schema['properties']['step_size']"},
	{"post reserved over total", "POST", invRPPath + "/inventories", "1.39", `{"resource_class": "VCPU", "total": 8, "reserved": 9}`, "Unable to create inventory for resource provider " + invTestRP + ": Invalid inventory for 'VCPU' on resource provider '" + invTestRP + "'. The reserved value is greater than total."},
	{"post reserved equal total at 1.25", "POST", invRPPath + "/inventories", "1.25", `{"resource_class": "VCPU", "total": 8, "reserved": 8}`, "The reserved value is greater than or equal to total."},
	{"post zero ratio at 1.25", "POST", invRPPath + "/inventories", "1.25", `{"resource_class": "VCPU", "total": 8, "allocation_ratio": 0}`, "The reserved value is greater than or equal to total."},
	{"post negative ratio", "POST", invRPPath + "/inventories", "1.39", `{"resource_class": "VCPU", "total": 8, "allocation_ratio": -1}`, "The reserved value is greater than total."},
	{"post lower-case class", "POST", invRPPath + "/inventories", "1.39", `{"resource_class": "vcpu", "total": 8}`, "Failed validating 'pattern'"},
	{"post unknown class", "POST", invRPPath + "/inventories", "1.39", `{"resource_class": "CUSTOM_` + strings.Repeat("X", 300) + `", "total": 8}`, "No such resource class CUSTOM_XXX"},
	{"post bad microversion header", "POST", invRPPath + "/inventories", "1.x", `{"resource_class": "VCPU", "total": 8}`, "Invalid microversion"},

	// PUT all inventories.
	{"put all malformed json", "PUT", invRPPath + "/inventories", "1.39", `{"resource_provider_generation": 0, "inventories": {`, "Malformed JSON"},
	{"put all trailing data", "PUT", invRPPath + "/inventories", "1.39", `{"resource_provider_generation": 0, "inventories": {}} {}`, "Malformed JSON"},
	{"put all missing generation", "PUT", invRPPath + "/inventories", "1.39", `{"inventories": {}}`, "'resource_provider_generation' is a required property"},
	{"put all generation as string", "PUT", invRPPath + "/inventories", "1.39", `{"resource_provider_generation": "0", "inventories": {}}`, "'0' is not of type 'integer'"},
	{"put all inventories as list", "PUT", invRPPath + "/inventories", "1.39", `{"resource_provider_generation": 0, "inventories": []}`, "[] is not of type 'object'"},
	{"put all unknown top-level property", "PUT", invRPPath + "/inventories", "1.39", `{"resource_provider_generation": 0, "inventories": {}, "x": 1}`, "Additional properties are not allowed"},
	{"put all unknown inventory property", "PUT", invRPPath + "/inventories", "1.39", `{"resource_provider_generation": 0, "inventories": {"VCPU": {"total": 8, "size": 1}}}`, "Additional properties are not allowed ('size' was unexpected)"},
	{"put all inventory not an object", "PUT", invRPPath + "/inventories", "1.39", `{"resource_provider_generation": 0, "inventories": {"VCPU": 8}}`, "8 is not of type 'object'"},
	{"put all missing total", "PUT", invRPPath + "/inventories", "1.39", `{"resource_provider_generation": 0, "inventories": {"VCPU": {"reserved": 1}}}`, "'total' is a required property"},
	{"put all negative min_unit", "PUT", invRPPath + "/inventories", "1.39", `{"resource_provider_generation": 0, "inventories": {"VCPU": {"total": 8, "min_unit": -3}}}`, "-3 is less than the minimum of 1"},
	{"put all ratio over max", "PUT", invRPPath + "/inventories", "1.39", `{"resource_provider_generation": 0, "inventories": {"VCPU": {"total": 8, "allocation_ratio": 1e39}}}`, "Failed validating 'maximum'"},
	{"put all reserved over total", "PUT", invRPPath + "/inventories", "1.39", `{"resource_provider_generation": 0, "inventories": {"DISK_GB": {"total": 8}, "VCPU": {"total": 8, "reserved": 100}}}`, "Unable to update inventory for resource provider " + invTestRP + ": Invalid inventory for 'VCPU'"},
	{"put all reserved equal total at 1.25", "PUT", invRPPath + "/inventories", "1.25", `{"resource_provider_generation": 0, "inventories": {"VCPU": {"total": 8, "reserved": 8}}}`, "greater than or equal to total"},
	{"put all unknown class", "PUT", invRPPath + "/inventories", "1.39", `{"resource_provider_generation": 0, "inventories": {"VCPU": {"total": 8}, "CUSTOM_NOPE": {"total": 1}}}`, "Unknown resource class in inventory for resource provider " + invTestRP + ": No such resource class CUSTOM_NOPE."},
	{"put all unpatterned key", "PUT", invRPPath + "/inventories", "1.39", `{"resource_provider_generation": 0, "inventories": {"bad": 5}}`, "Bad inventory bad"},

	// PUT one inventory (there is none yet; validation comes first).
	{"put one malformed json", "PUT", invRPPath + "/inventories/VCPU", "1.39", `{"total": 8,}`, "Malformed JSON"},
	{"put one missing generation", "PUT", invRPPath + "/inventories/VCPU", "1.39", `{"total": 8}`, "'resource_provider_generation' is a required property"},
	{"put one bool total", "PUT", invRPPath + "/inventories/VCPU", "1.39", `{"resource_provider_generation": 0, "total": true}`, "True is not of type 'integer'"},
	{"put one unknown property", "PUT", invRPPath + "/inventories/VCPU", "1.39", `{"resource_provider_generation": 0, "total": 8, "resource_class": "VCPU"}`, "Additional properties are not allowed"},
	{"put one absent inventory", "PUT", invRPPath + "/inventories/VCPU", "1.39", `{"resource_provider_generation": 0, "total": 8}`, "No inventory record with resource class for resource provider " + invTestRP + ": No inventory of class VCPU found."},
	{"put one reserved over total", "PUT", invRPPath + "/inventories/VCPU", "1.39", `{"resource_provider_generation": 0, "total": 8, "reserved": 10}`, "Unable to update inventory for resource provider"},

	// Resource classes.
	{"post class malformed json", "POST", "/resource_classes", "1.39", `{"name": `, "Malformed JSON"},
	{"post class name not custom", "POST", "/resource_classes", "1.39", `{"name": "IRON"}`, "'IRON' does not match '^CUSTOM_[A-Z0-9_]+$'"},
	{"post class name too long", "POST", "/resource_classes", "1.39", `{"name": "CUSTOM_` + strings.Repeat("A", 249) + `"}`, "Failed validating 'maxLength'"},
	{"post class name number", "POST", "/resource_classes", "1.39", `{"name": 5}`, "5 is not of type 'string'"},
	{"post class unknown property", "POST", "/resource_classes", "1.39", `{"name": "CUSTOM_A", "x": 1}`, "Additional properties are not allowed ('x' was unexpected)"},
	{"put class 1.6 bodiless", "PUT", "/resource_classes/CUSTOM_A", "1.6", ` `, "Malformed JSON"},
	{"put class 1.6 standard target", "PUT", "/resource_classes/CUSTOM_A", "1.6", `{"name": "VCPU"}`, "Failed validating 'pattern'"},
	{"put class 1.6 rename standard", "PUT", "/resource_classes/VCPU", "1.6", `{"name": "CUSTOM_VCPU"}`, "Cannot update standard resource class VCPU"},
	{"put class 1.7 standard", "PUT", "/resource_classes/VCPU", "1.7", "", "Failed validating 'pattern'"},
	{"put class 1.7 too long", "PUT", "/resource_classes/CUSTOM_" + strings.Repeat("B", 249), "1.7", "", "Failed validating 'maxLength'"},
	{"delete standard class", "DELETE", "/resource_classes/VCPU", "1.39", "", "Error in delete resource class: Cannot delete standard resource class VCPU."},

	// Usages.
	{"usages without project", "GET", "/usages", "1.9", "", "'project_id' is a required property"},
	{"usages empty project", "GET", "/usages?project_id=", "1.9", "", "Failed validating 'minLength'"},
	{"usages unknown parameter", "GET", "/usages?project_id=p&x=1", "1.9", "", "Additional properties are not allowed"},
	{"usages consumer_type before 1.38", "GET", "/usages?project_id=p&consumer_type=all", "1.37", "", "Additional properties are not allowed"},
	{"usages bad consumer_type", "GET", "/usages?project_id=p&consumer_type=lower", "1.38", "", "Failed validating 'pattern'"},
}

func TestInventoryRoutesRejectBadInput(t *testing.T) {
	e := newInvEnv(t)
	// Start from one inventory so that "nothing changed" is meaningful.
	seed := e.do(t, call{Method: "PUT", Path: invRPPath + "/inventories", Version: "1.39", Body: `{"resource_provider_generation": 0, "inventories": {"DISK_GB": {"total": 100}}}`})
	if seed.Status != 200 {
		t.Fatalf("seed: %d %s", seed.Status, seed.Body)
	}
	if r := e.do(t, call{Method: "POST", Path: "/resource_classes", Version: "1.39", Body: `{"name": "CUSTOM_A"}`}); r.Status != 201 {
		t.Fatalf("seed class: %d %s", r.Status, r.Body)
	}
	before := e.snapshot()
	for _, tc := range invBadInputCases {
		t.Run(tc.name, func(t *testing.T) {
			body := strings.ReplaceAll(tc.body, `"resource_provider_generation": 0`, `"resource_provider_generation": 1`)
			invWantError(t, e.do(t, call{Method: tc.method, Path: tc.path, Version: tc.version, Body: body}), http.StatusBadRequest, tc.detail)
			if after := e.snapshot(); !reflect.DeepEqual(before, after) {
				t.Fatalf("state changed:\nbefore %v\nafter  %v", before, after)
			}
		})
	}
}

func TestInventoryReservedEqualTotalByMicroversion(t *testing.T) {
	e := newInvEnv(t)
	body := `{"resource_provider_generation": 0, "inventories": {"VCPU": {"total": 8, "reserved": 8}}}`
	invWantError(t, e.do(t, call{Method: "PUT", Path: invRPPath + "/inventories", Version: "1.25", Body: body}), 400, "The reserved value is greater than or equal to total.")
	r := e.do(t, call{Method: "PUT", Path: invRPPath + "/inventories", Version: "1.26", Body: body})
	if r.Status != 200 {
		t.Fatalf("1.26: %d %s", r.Status, r.Body)
	}
	got := r.JSON(t)
	if got["resource_provider_generation"].(float64) != 1 {
		t.Fatalf("generation %v", got["resource_provider_generation"])
	}
	vcpu := got["inventories"].(map[string]any)["VCPU"].(map[string]any)
	want := map[string]any{"total": 8.0, "reserved": 8.0, "min_unit": 1.0, "max_unit": 2147483647.0, "step_size": 1.0, "allocation_ratio": 1.0}
	if !reflect.DeepEqual(vcpu, want) {
		t.Fatalf("inventory %v, want defaults %v", vcpu, want)
	}
	if !strings.Contains(string(r.Body), `"allocation_ratio":1.0`) {
		t.Fatalf("allocation_ratio not rendered as a float: %s", r.Body)
	}
	// PUT one follows the same rule.
	one := `{"resource_provider_generation": 1, "total": 4, "reserved": 4}`
	invWantError(t, e.do(t, call{Method: "PUT", Path: invRPPath + "/inventories/VCPU", Version: "1.25", Body: one}), 400, "greater than or equal to total")
	if r := e.do(t, call{Method: "PUT", Path: invRPPath + "/inventories/VCPU", Version: "1.26", Body: one}); r.Status != 200 {
		t.Fatalf("PUT one at 1.26: %d %s", r.Status, r.Body)
	}
}

func TestInventoryCreateAndGenerations(t *testing.T) {
	e := newInvEnv(t)
	r := e.do(t, call{Method: "POST", Path: invRPPath + "/inventories", Version: "1.39", Body: `{"resource_class": "VCPU", "total": 8, "allocation_ratio": 16}`})
	if r.Status != 201 {
		t.Fatalf("POST: %d %s", r.Status, r.Body)
	}
	if loc := r.Header.Get("Location"); loc != e.URL+invRPPath+"/inventories/VCPU" {
		t.Fatalf("Location %q", loc)
	}
	if r.Header.Get("Last-Modified") == "" || r.Header.Get("Cache-Control") != "no-cache" {
		t.Fatalf("cache headers missing: %v", r.Header)
	}
	if g := r.JSON(t)["resource_provider_generation"]; g != 1.0 {
		t.Fatalf("generation %v", g)
	}
	dup := e.do(t, call{Method: "POST", Path: invRPPath + "/inventories", Version: "1.39", Body: `{"resource_class": "VCPU", "total": 8}`})
	invWantError(t, dup, 409, "Update conflict")
	stale := e.do(t, call{Method: "PUT", Path: invRPPath + "/inventories", Version: "1.39", Body: `{"resource_provider_generation": 0, "inventories": {}}`})
	invWantError(t, stale, 409, "resource provider generation conflict")
	staleOne := e.do(t, call{Method: "PUT", Path: invRPPath + "/inventories/VCPU", Version: "1.39", Body: `{"resource_provider_generation": 0, "total": 1}`})
	invWantError(t, staleOne, 409, "resource provider generation conflict")
	if invErrorCode(t, staleOne) != "placement.concurrent_update" {
		t.Fatalf("missing error code: %s", staleOne.Body)
	}
	e.restart()
	got := e.do(t, call{Method: "GET", Path: invRPPath + "/inventories/VCPU", Version: "1.14"})
	if got.Status != 200 || got.Header.Get("Last-Modified") != "" {
		t.Fatalf("GET one at 1.14: %d %v", got.Status, got.Header)
	}
	if m := got.JSON(t); m["allocation_ratio"] != 16.0 || m["resource_provider_generation"] != 1.0 {
		t.Fatalf("after restart: %v", m)
	}
	invWantError(t, e.do(t, call{Method: "GET", Path: invRPPath + "/inventories/DISK_GB", Version: "1.39"}), 404, "No inventory of class DISK_GB for "+invTestRP)
	invWantError(t, e.do(t, call{Method: "DELETE", Path: invRPPath + "/inventories/DISK_GB", Version: "1.39"}), 404, "No inventory of class DISK_GB found for delete")
}

// seedInvAllocation writes a consumer with one allocation on the test
// provider straight into the database file; restart the env to load it.
func seedInvAllocation(t *testing.T, path, class string, used int) {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?_foreign_keys=on&_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	stmts := []string{
		`INSERT INTO projects (external_id) VALUES ('proj') ON CONFLICT DO NOTHING`,
		`INSERT INTO users (external_id) VALUES ('user') ON CONFLICT DO NOTHING`,
		`INSERT INTO consumers (uuid, project_id, user_id, created_at) VALUES ('c1', (SELECT id FROM projects), (SELECT id FROM users), 0) ON CONFLICT DO NOTHING`,
	}
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	_, err = db.Exec(`INSERT INTO allocations (resource_provider_id, consumer_id, resource_class_id, used, created_at)
		VALUES ((SELECT id FROM resource_providers WHERE uuid = ?), (SELECT id FROM consumers WHERE uuid = 'c1'),
		(SELECT id FROM resource_classes WHERE name = ?), ?, 0)`, invTestRP, class, used)
	if err != nil {
		t.Fatal(err)
	}
}

func TestDeleteAllInventories(t *testing.T) {
	e := newInvEnv(t)
	put := `{"resource_provider_generation": 0, "inventories": {"VCPU": {"total": 8}, "DISK_GB": {"total": 10}, "MEMORY_MB": {"total": 10}}}`
	if r := e.do(t, call{Method: "PUT", Path: invRPPath + "/inventories", Version: "1.39", Body: put}); r.Status != 200 {
		t.Fatalf("seed: %d %s", r.Status, r.Body)
	}
	before := e.snapshot()
	r := e.do(t, call{Method: "DELETE", Path: invRPPath + "/inventories", Version: "1.4"})
	invWantError(t, r, 405, "The method DELETE is not allowed for this resource.")
	if r.Header.Get("Allow") != "" {
		t.Fatalf("version-gated 405 has Allow %q", r.Header.Get("Allow"))
	}
	if after := e.snapshot(); !reflect.DeepEqual(before, after) {
		t.Fatalf("405 changed state")
	}

	e.stop()
	seedInvAllocation(t, e.Path, "DISK_GB", 2)
	seedInvAllocation(t, e.Path, "VCPU", 1)
	e.restart()
	const inUse = "Inventory for 'VCPU, DISK_GB' on resource provider '" + invTestRP + "' in use."
	r = e.do(t, call{Method: "DELETE", Path: invRPPath + "/inventories", Version: "1.39"})
	invWantError(t, r, 409, inUse)
	if invErrorCode(t, r) != "placement.inventory.inuse" {
		t.Fatalf("code: %s", r.Body)
	}
	r = e.do(t, call{Method: "PUT", Path: invRPPath + "/inventories", Version: "1.39", Body: `{"resource_provider_generation": 1, "inventories": {}}`})
	invWantError(t, r, 409, "update conflict: "+inUse)
	// Upstream's quirk: DELETE of one in-use inventory says concurrent_update.
	r = e.do(t, call{Method: "DELETE", Path: invRPPath + "/inventories/VCPU", Version: "1.39"})
	invWantError(t, r, 409, "Unable to delete inventory of class VCPU: Inventory for 'VCPU' on resource provider")
	if invErrorCode(t, r) != "placement.concurrent_update" {
		t.Fatalf("code: %s", r.Body)
	}
	invWantError(t, e.do(t, call{Method: "DELETE", Path: "/resource_classes/CUSTOM_NONE", Version: "1.39"}), 404, "No such resource class CUSTOM_NONE.")
	if after := e.snapshot(); !reflect.DeepEqual(before, after) {
		t.Fatalf("refused deletes changed state:\nbefore %v\nafter  %v", before, after)
	}
	usages := e.do(t, call{Method: "GET", Path: invRPPath + "/usages", Version: "1.39"})
	if got := usages.JSON(t)["usages"]; !reflect.DeepEqual(got, map[string]any{"VCPU": 1.0, "DISK_GB": 2.0, "MEMORY_MB": 0.0}) {
		t.Fatalf("usages %v", got)
	}
	total := e.do(t, call{Method: "GET", Path: "/usages?project_id=proj", Version: "1.38"})
	if got := total.JSON(t)["usages"]; !reflect.DeepEqual(got, map[string]any{"unknown": map[string]any{"VCPU": 1.0, "DISK_GB": 2.0, "consumer_count": 1.0}}) {
		t.Fatalf("total usages %v", got)
	}
	flat := e.do(t, call{Method: "GET", Path: "/usages?project_id=proj", Version: "1.9"})
	if got := flat.JSON(t)["usages"]; !reflect.DeepEqual(got, map[string]any{"VCPU": 1.0, "DISK_GB": 2.0}) {
		t.Fatalf("flat usages %v", got)
	}

	// Removing only the unused class is fine; then, without allocations,
	// DELETE all works.
	if r := e.do(t, call{Method: "DELETE", Path: invRPPath + "/inventories/MEMORY_MB", Version: "1.39"}); r.Status != 204 {
		t.Fatalf("delete unused: %d %s", r.Status, r.Body)
	}
	e.stop()
	db, err := sql.Open("sqlite3", "file:"+e.Path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`DELETE FROM allocations`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	e.restart()
	if r := e.do(t, call{Method: "DELETE", Path: invRPPath + "/inventories", Version: "1.5"}); r.Status != 204 || len(r.Body) != 0 {
		t.Fatalf("delete all: %d %s", r.Status, r.Body)
	}
	final := e.snapshot().Inventories
	if final["resource_provider_generation"] != 3.0 || len(final["inventories"].(map[string]any)) != 0 {
		t.Fatalf("after delete all: %v", final)
	}
}

func TestResourceClassLifecycle(t *testing.T) {
	e := newInvEnv(t)
	invWantError(t, e.do(t, call{Method: "GET", Path: "/resource_classes", Version: "1.1"}), 404, "The resource could not be found.")
	r := e.do(t, call{Method: "PUT", Path: "/resource_classes/CUSTOM_GOLD", Version: "1.7"})
	if r.Status != 201 || r.Header.Get("Location") != e.URL+"/resource_classes/CUSTOM_GOLD" {
		t.Fatalf("PUT 1.7 create: %d %v", r.Status, r.Header)
	}
	if r := e.do(t, call{Method: "PUT", Path: "/resource_classes/CUSTOM_GOLD", Version: "1.7"}); r.Status != 204 {
		t.Fatalf("PUT 1.7 existing: %d", r.Status)
	}
	invWantError(t, e.do(t, call{Method: "POST", Path: "/resource_classes", Version: "1.39", Body: `{"name": "CUSTOM_GOLD"}`}), 409, "Conflicting resource class already exists: CUSTOM_GOLD")
	if r := e.do(t, call{Method: "POST", Path: "/resource_classes", Version: "1.39", Body: `{"name": "CUSTOM_SILVER"}`}); r.Status != 201 {
		t.Fatalf("POST: %d %s", r.Status, r.Body)
	}
	invWantError(t, e.do(t, call{Method: "PUT", Path: "/resource_classes/CUSTOM_SILVER", Version: "1.6", Body: `{"name": "CUSTOM_GOLD"}`}), 409, "Resource class already exists: CUSTOM_GOLD")
	r = e.do(t, call{Method: "PUT", Path: "/resource_classes/CUSTOM_SILVER", Version: "1.6", Body: `{"name": "CUSTOM_BRONZE"}`})
	if r.Status != 200 || r.JSON(t)["name"] != "CUSTOM_BRONZE" {
		t.Fatalf("rename: %d %s", r.Status, r.Body)
	}
	if r := e.do(t, call{Method: "POST", Path: invRPPath + "/inventories", Version: "1.39", Body: `{"resource_class": "CUSTOM_GOLD", "total": 1}`}); r.Status != 201 {
		t.Fatalf("inventory: %d %s", r.Status, r.Body)
	}
	invWantError(t, e.do(t, call{Method: "DELETE", Path: "/resource_classes/CUSTOM_GOLD", Version: "1.39"}), 409, "Error in delete resource class: Cannot delete resource class CUSTOM_GOLD. Class is in use in inventory.")
	e.restart()
	if r := e.do(t, call{Method: "GET", Path: "/resource_classes/CUSTOM_BRONZE", Version: "1.15"}); r.Status != 200 || r.Header.Get("Last-Modified") == "" {
		t.Fatalf("GET renamed after restart: %d %v", r.Status, r.Header)
	}
	if r := e.do(t, call{Method: "DELETE", Path: "/resource_classes/CUSTOM_BRONZE", Version: "1.39"}); r.Status != 204 {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	invWantError(t, e.do(t, call{Method: "GET", Path: "/resource_classes/CUSTOM_BRONZE", Version: "1.39"}), 404, "No such resource class CUSTOM_BRONZE.")
}
