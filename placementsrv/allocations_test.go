package placementsrv

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

const (
	alRP       = "11111111-1111-4111-8111-111111111111"
	alRP2      = "22222222-2222-4222-8222-222222222222"
	alConsumer = "cccccccc-cccc-4ccc-8ccc-cccccccccccc"
	alOther    = "dddddddd-dddd-4ddd-8ddd-dddddddddddd"
)

// alEnv is a testServer with two providers: alRP with 8 VCPU (max_unit
// 4, step 1) and 100 DISK_GB (step 10), alRP2 with 4 VCPU.
type alEnv struct {
	t *testing.T
	*testServer
}

func newAlEnv(t *testing.T) *alEnv {
	t.Helper()
	e := &alEnv{t: t, testServer: startTestServer(t)}
	e.provider(alRP, "rp1",
		store.Inventory{ResourceClass: "VCPU", InventoryAmounts: store.InventoryAmounts{Total: 8, MinUnit: 1, MaxUnit: 4, StepSize: 1, AllocationRatio: 1}},
		store.Inventory{ResourceClass: "DISK_GB", InventoryAmounts: store.InventoryAmounts{Total: 100, MinUnit: 10, MaxUnit: 100, StepSize: 10, AllocationRatio: 1}})
	e.provider(alRP2, "rp2",
		store.Inventory{ResourceClass: "VCPU", InventoryAmounts: store.InventoryAmounts{Total: 4, MinUnit: 1, MaxUnit: 4, StepSize: 1, AllocationRatio: 1}})
	return e
}

func (e *alEnv) provider(uuid, name string, invs ...store.Inventory) {
	e.t.Helper()
	ctx := context.Background()
	if _, err := e.Store.CreateProvider(ctx, store.NewProvider{UUID: uuid, Name: name}); err != nil {
		e.t.Fatal(err)
	}
	if _, _, err := e.Store.SetInventories(ctx, uuid, 0, invs); err != nil {
		e.t.Fatal(err)
	}
}

// putAllocs PUTs body as the allocations of consumer.
func (e *alEnv) putAllocs(consumer, version, body string) testResponse {
	e.t.Helper()
	return e.do(e.t, call{Method: "PUT", Path: "/allocations/" + consumer, Version: version, ContentType: "application/json", Body: body})
}

// snapshot is everything an allocation write may change, as the API
// shows it.
func (e *alEnv) snapshot() string {
	e.t.Helper()
	var b strings.Builder
	for _, p := range []string{
		"/allocations/" + alConsumer, "/allocations/" + alOther,
		"/resource_providers/" + alRP + "/allocations", "/resource_providers/" + alRP2 + "/allocations",
		"/resource_providers/" + alRP + "/inventories", "/resource_providers/" + alRP2 + "/inventories",
	} {
		r := e.do(e.t, call{Method: "GET", Path: p, Version: "1.38"})
		fmt.Fprintf(&b, "%s %d %s\n", p, r.Status, r.Body)
	}
	return b.String()
}

// alWantError checks Placement's error document.
func alWantError(t *testing.T, r testResponse, status int, code, detail string) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d: %s", r.Status, status, r.Body)
	}
	var doc struct {
		Errors []struct {
			Status int    `json:"status"`
			Title  string `json:"title"`
			Detail string `json:"detail"`
			Code   string `json:"code"`
		} `json:"errors"`
	}
	if err := json.Unmarshal(r.Body, &doc); err != nil || len(doc.Errors) != 1 {
		t.Fatalf("not an error document: %s", r.Body)
	}
	got := doc.Errors[0]
	if got.Status != status || got.Title != http.StatusText(status) {
		t.Errorf("error status/title %d %q", got.Status, got.Title)
	}
	if code != "" && got.Code != code {
		t.Errorf("code %q, want %q", got.Code, code)
	}
	if !strings.Contains(got.Detail, detail) {
		t.Errorf("detail %q does not contain %q", got.Detail, detail)
	}
}

// alBadInput is one malformed request and upstream's answer to it.
type alBadInput struct {
	name, method, path, version, contentType, body string
	status                                         int
	code, detail                                   string
}

func alBadInputs() []alBadInput {
	put := "/allocations/" + alConsumer
	// alConsumer exists at generation 1 when these run.
	good38 := func(allocs string) string {
		return `{"allocations": ` + allocs + `, "project_id": "p", "user_id": "u", "consumer_generation": 1, "consumer_type": "INSTANCE"}`
	}
	rp := func(res string) string { return `{"` + alRP + `": {"resources": ` + res + `}}` }
	return []alBadInput{
		{"put malformed json", "PUT", put, "1.38", "application/json", `{"allocations": `, 400, "", "Malformed JSON"},
		{"put empty body", "PUT", put, "1.38", "application/json", ``, 400, "", "Malformed JSON"},
		{"put no content type", "PUT", put, "1.38", "", ``, 415, "", "The media type None is not supported"},
		{"put text content type", "PUT", put, "1.38", "text/plain", `{}`, 415, "", "text/plain is not supported"},
		{"put bad consumer uuid", "PUT", "/allocations/not-a-uuid", "1.38", "application/json", good38(rp(`{"VCPU": 1}`)), 400, "", "Malformed consumer_uuid: not-a-uuid"},
		{"put wrong type resources", "PUT", put, "1.38", "application/json", good38(rp(`{"VCPU": "1"}`)), 400, "", "JSON does not validate: '1' is not of type 'integer'"},
		{"put zero amount", "PUT", put, "1.38", "application/json", good38(rp(`{"VCPU": 0}`)), 400, "", "JSON does not validate: 0 is less than the minimum of 1"},
		{"put float amount", "PUT", put, "1.38", "application/json", good38(rp(`{"VCPU": 1.5}`)), 400, "", "JSON does not validate: 1.5 is not of type 'integer'"},
		{"put lowercase class", "PUT", put, "1.38", "application/json", good38(rp(`{"vcpu": 1}`)), 400, "", "does not match any of the regexes"},
		{"put unknown property", "PUT", put, "1.38", "application/json", `{"allocations": {}, "project_id": "p", "user_id": "u", "consumer_generation": null, "consumer_type": "INSTANCE", "cow": 1}`, 400, "", "Additional properties are not allowed ('cow' was unexpected)"},
		{"put bad provider uuid key", "PUT", put, "1.38", "application/json", good38(`{"nope": {"resources": {"VCPU": 1}}}`), 400, "", "does not match any of the regexes"},
		{"put missing consumer type", "PUT", put, "1.38", "application/json", `{"allocations": {}, "project_id": "p", "user_id": "u", "consumer_generation": null}`, 400, "", "'consumer_type' is a required property"},
		{"put consumer type at 1.37", "PUT", put, "1.37", "application/json", good38(`{}`), 400, "", "'consumer_type' was unexpected"},
		{"put missing consumer generation", "PUT", put, "1.28", "application/json", `{"allocations": {}, "project_id": "p", "user_id": "u"}`, 400, "", "'consumer_generation' is a required property"},
		{"put empty allocations at 1.27", "PUT", put, "1.27", "application/json", `{"allocations": {}, "project_id": "p", "user_id": "u"}`, 400, "", "does not have enough properties"},
		{"put dict form at 1.11", "PUT", put, "1.11", "application/json", `{"allocations": ` + rp(`{"VCPU": 1}`) + `, "project_id": "p", "user_id": "u"}`, 400, "", "is not of type 'array'"},
		{"put missing project at 1.8", "PUT", put, "1.8", "application/json", `{"allocations": [{"resource_provider": {"uuid": "` + alRP + `"}, "resources": {"VCPU": 1}}], "user_id": "u"}`, 400, "", "'project_id' is a required property"},
		{"put list form bad rp uuid", "PUT", put, "1.7", "application/json", `{"allocations": [{"resource_provider": {"uuid": "x"}, "resources": {"VCPU": 1}}]}`, 400, "", "is not a 'uuid'"},
		{"put unknown provider", "PUT", put, "1.38", "application/json", good38(`{"99999999-9999-4999-8999-999999999999": {"resources": {"VCPU": 1}}}`), 400, "", "Allocation for resource provider '99999999-9999-4999-8999-999999999999' that does not exist."},
		{"put unknown class", "PUT", put, "1.38", "application/json", good38(rp(`{"CUSTOM_NOPE": 1}`)), 400, "", "Unable to allocate inventory for consumer " + alConsumer + ": No such resource class CUSTOM_NOPE."},
		{"put bad microversion", "PUT", put, "1.x", "application/json", good38(rp(`{"VCPU": 1}`)), 400, "", "Invalid microversion"},
		{"put unsupported microversion", "PUT", put, "1.99", "application/json", good38(rp(`{"VCPU": 1}`)), 406, "", "Unacceptable version header: 1.99"},
		{"post before 1.13", "POST", "/allocations", "1.12", "application/json", `{}`, 404, "", ""},
		{"post malformed json", "POST", "/allocations", "1.38", "application/json", `[`, 400, "", "Malformed JSON"},
		{"post empty object", "POST", "/allocations", "1.38", "application/json", `{}`, 400, "", "does not have enough properties"},
		{"post bad consumer key", "POST", "/allocations", "1.38", "application/json", `{"nope": ` + good38(`{}`) + `}`, 400, "", "does not match any of the regexes"},
		{"post wrong type", "POST", "/allocations", "1.38", "application/json", `[]`, 400, "", "[] is not of type 'object'"},
		{"post unknown class", "POST", "/allocations", "1.38", "application/json", `{"` + alConsumer + `": ` + good38(rp(`{"CUSTOM_NOPE": 1}`)) + `}`, 400, "", "Unable to allocate inventory No such resource class CUSTOM_NOPE."},
		{"post no content type", "POST", "/allocations", "1.38", "", ``, 415, "", "not supported"},
		{"reshaper before 1.30", "POST", "/reshaper", "1.29", "application/json", `{}`, 404, "", ""},
		{"reshaper malformed", "POST", "/reshaper", "1.38", "application/json", `{`, 400, "", "Malformed JSON"},
		{"reshaper unknown property", "POST", "/reshaper", "1.38", "application/json", `{"cows": "moo"}`, 400, "", "JSON does not validate"},
		{"reshaper unknown provider", "POST", "/reshaper", "1.38", "application/json", `{"inventories": {"99999999-9999-4999-8999-999999999999": {"resource_provider_generation": 0, "inventories": {}}}, "allocations": {}}`, 400, apierror.CodeProviderNotFound, "Resource provider 99999999-9999-4999-8999-999999999999 in inventories not found: No resource provider with uuid 99999999-9999-4999-8999-999999999999 found"},
		{"reshaper unknown class", "POST", "/reshaper", "1.38", "application/json", `{"inventories": {"` + alRP2 + `": {"resource_provider_generation": 1, "inventories": {"CUSTOM_NOPE": {"total": 1}}}}, "allocations": {}}`, 400, "", "malformed reshaper data: No such resource class CUSTOM_NOPE."},
		{"get provider allocations unknown", "GET", "/resource_providers/99999999-9999-4999-8999-999999999999/allocations", "1.38", "", "", 404, "", "Resource provider '99999999-9999-4999-8999-999999999999' not found: No resource provider with uuid 99999999-9999-4999-8999-999999999999 found"},
		{"delete unknown consumer", "DELETE", "/allocations/" + alOther, "1.38", "", "", 404, "", "No allocations for consumer '" + alOther + "'"},
	}
}

func TestAllocationRoutesRejectBadInput(t *testing.T) {
	e := newAlEnv(t)
	if r := e.putAllocs(alConsumer, "1.38", `{"allocations": {"`+alRP+`": {"resources": {"VCPU": 2}}}, "project_id": "p", "user_id": "u", "consumer_generation": null, "consumer_type": "INSTANCE"}`); r.Status != 204 {
		t.Fatalf("seed: %d %s", r.Status, r.Body)
	}
	before := e.snapshot()
	for _, tc := range alBadInputs() {
		t.Run(tc.name, func(t *testing.T) {
			ct := tc.contentType // none unless the case names one
			if ct == "" {
				ct = noContentType
			}
			r := e.do(t, call{Method: tc.method, Path: tc.path, Version: tc.version, ContentType: ct, Body: tc.body})
			alWantError(t, r, tc.status, tc.code, tc.detail)
			if after := e.snapshot(); after != before {
				t.Fatalf("state changed:\nbefore %s\nafter %s", before, after)
			}
		})
	}
}

func TestAllocationConflictsWriteNothing(t *testing.T) {
	e := newAlEnv(t)
	alloc := func(gen, res string) string {
		return `{"allocations": {"` + alRP + `": {"resources": ` + res + `}}, "project_id": "p", "user_id": "u", "consumer_generation": ` + gen + `, "consumer_type": "INSTANCE"}`
	}
	if r := e.putAllocs(alConsumer, "1.38", alloc("null", `{"VCPU": 4}`)); r.Status != 204 {
		t.Fatalf("seed: %d %s", r.Status, r.Body)
	}
	before := e.snapshot()
	for _, tc := range []struct {
		name, consumer, version, body string
		code, detail                  string
	}{
		{"exceeds capacity", alOther, "1.38", `{"` + alOther + `": ` + alloc("null", `{"VCPU": 4}`) + `, "eeeeeeee-eeee-4eee-8eee-eeeeeeeeeeee": ` + alloc("null", `{"VCPU": 1}`) + `}`,
			apierror.CodeDefault, "Unable to allocate inventory: Unable to create allocation for 'VCPU' on resource provider '" + alRP + "'. The requested amount would exceed the capacity."},
		{"above max_unit", alOther, "1.38", `{"` + alOther + `": ` + alloc("null", `{"VCPU": 5}`) + `}`,
			apierror.CodeDefault, "The requested amount would violate inventory constraints."},
		{"step size", alOther, "1.38", `{"` + alOther + `": ` + alloc("null", `{"DISK_GB": 15}`) + `}`,
			apierror.CodeDefault, "The requested amount would violate inventory constraints."},
		{"class without inventory", alOther, "1.38", `{"` + alOther + `": ` + alloc("null", `{"PCI_DEVICE": 1}`) + `}`,
			apierror.CodeDefault, "Unable to allocate inventory: Inventory for 'PCI_DEVICE' on resource provider '" + alRP + "' invalid."},
		{"existing consumer sends null", alConsumer, "1.38", `{"` + alConsumer + `": ` + alloc("null", `{"VCPU": 1}`) + `}`,
			apierror.CodeConcurrentUpdate, "consumer generation conflict - expected 1 but got None"},
		{"new consumer sends generation", alOther, "1.38", `{"` + alOther + `": ` + alloc("3", `{"VCPU": 1}`) + `}`,
			apierror.CodeConcurrentUpdate, "consumer generation conflict - expected null but got 3"},
		{"second consumer fails after first fits", alOther, "1.38", `{"` + alOther + `": ` + alloc("null", `{"VCPU": 1}`) + `, "` + alConsumer + `": ` + alloc("0", `{"VCPU": 1}`) + `}`,
			apierror.CodeConcurrentUpdate, "consumer generation conflict - expected 1 but got 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(t, call{Method: "POST", Path: "/allocations", Version: tc.version, ContentType: "application/json", Body: tc.body})
			alWantError(t, r, 409, tc.code, tc.detail)
			if after := e.snapshot(); after != before {
				t.Fatalf("state changed:\nbefore %s\nafter %s", before, after)
			}
		})
	}
}

// TestAllocationLifecycle follows one consumer through the microversion
// forms and checks generations and the consumer's removal.
func TestAllocationLifecycle(t *testing.T) {
	e := newAlEnv(t)
	// 1.0 list form: incomplete project and user.
	r := e.putAllocs(strings.ToUpper(alConsumer), "1.0", `{"allocations": [{"resource_provider": {"uuid": "`+alRP+`"}, "resources": {"VCPU": 1}}, {"resource_provider": {"uuid": "`+alRP+`"}, "resources": {"VCPU": 2}}]}`)
	if r.Status != 204 {
		t.Fatalf("put 1.0: %d %s", r.Status, r.Body)
	}
	var got struct {
		Allocations map[string]struct {
			Generation int64            `json:"generation"`
			Resources  map[string]int64 `json:"resources"`
		} `json:"allocations"`
		ProjectID    string `json:"project_id"`
		UserID       string `json:"user_id"`
		ConsumerGen  *int64 `json:"consumer_generation"`
		ConsumerType string `json:"consumer_type"`
	}
	r = e.do(t, call{Method: "GET", Path: "/allocations/" + alConsumer, Version: "1.38"})
	if err := json.Unmarshal(r.Body, &got); err != nil {
		t.Fatal(err)
	}
	if got.Allocations[alRP].Resources["VCPU"] != 2 || got.Allocations[alRP].Generation != 2 ||
		got.ProjectID != store.IncompleteConsumerID || got.UserID != store.IncompleteConsumerID ||
		got.ConsumerGen == nil || *got.ConsumerGen != 1 || got.ConsumerType != "unknown" {
		t.Fatalf("after 1.0 put: %s", r.Body)
	}
	if r.Header.Get("Last-Modified") == "" {
		t.Error("no Last-Modified at 1.38")
	}
	// 1.38 move to rp2 with a type: rp1's generation stays (upstream bumps
	// only providers named in the request).
	r = e.putAllocs(alConsumer, "1.38", `{"allocations": {"`+alRP2+`": {"resources": {"VCPU": 3}}}, "project_id": "p", "user_id": "u", "consumer_generation": 1, "consumer_type": "INSTANCE"}`)
	if r.Status != 204 {
		t.Fatalf("move: %d %s", r.Status, r.Body)
	}
	r = e.do(t, call{Method: "GET", Path: "/resource_providers/" + alRP + "/allocations", Version: "1.38"})
	if string(r.Body) != `{"allocations":{},"resource_provider_generation":2}` {
		t.Fatalf("rp1 after move: %s", r.Body)
	}
	r = e.do(t, call{Method: "GET", Path: "/resource_providers/" + alRP2 + "/allocations", Version: "1.38"})
	if string(r.Body) != `{"allocations":{"`+alConsumer+`":{"consumer_generation":2,"resources":{"VCPU":3}}},"resource_provider_generation":2}` {
		t.Fatalf("rp2 after move: %s", r.Body)
	}
	// Emptying at 1.28+ deletes the consumer: a new PUT must send null.
	r = e.putAllocs(alConsumer, "1.38", `{"allocations": {}, "project_id": "p", "user_id": "u", "consumer_generation": 2, "consumer_type": "INSTANCE"}`)
	if r.Status != 204 {
		t.Fatalf("empty: %d %s", r.Status, r.Body)
	}
	if r = e.do(t, call{Method: "GET", Path: "/allocations/" + alConsumer, Version: "1.38"}); string(r.Body) != `{"allocations":{}}` {
		t.Fatalf("after empty: %s", r.Body)
	}
	if r = e.do(t, call{Method: "DELETE", Path: "/allocations/" + alConsumer, Version: "1.38"}); r.Status != 404 {
		t.Fatalf("delete after empty: %d", r.Status)
	}
	r = e.putAllocs(alConsumer, "1.38", `{"allocations": {"`+alRP+`": {"resources": {"VCPU": 1}}}, "project_id": "p", "user_id": "u", "consumer_generation": null, "consumer_type": "INSTANCE"}`)
	if r.Status != 204 {
		t.Fatalf("recreate: %d %s", r.Status, r.Body)
	}
	if r = e.do(t, call{Method: "DELETE", Path: "/allocations/" + alConsumer, Version: "1.38"}); r.Status != 204 {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	if r = e.do(t, call{Method: "GET", Path: "/resource_providers/" + alRP + "/allocations", Version: "1.38"}); string(r.Body) != `{"allocations":{},"resource_provider_generation":3}` {
		t.Fatalf("rp1 after delete: %s", r.Body)
	}
}

// TestConcurrentClaimsNeverOverAllocate races many consumers for the last
// units of one provider through the HTTP server.
func TestConcurrentClaimsNeverOverAllocate(t *testing.T) {
	e := newAlEnv(t)
	const claimants = 40
	capacity := 4 // alRP2 has 4 VCPU
	var wg sync.WaitGroup
	statuses := make([]int, claimants)
	for i := 0; i < claimants; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			consumer := fmt.Sprintf("%08d-0000-4000-8000-000000000000", i)
			body := `{"allocations": {"` + alRP2 + `": {"resources": {"VCPU": 1}}}, "project_id": "p", "user_id": "u", "consumer_generation": null, "consumer_type": "INSTANCE"}`
			// send, not do: this goroutine may not stop the test.
			r, err := e.send(call{Method: "PUT", Path: "/allocations/" + consumer, Version: "1.38", Body: body})
			if err != nil {
				t.Error(err)
				return
			}
			statuses[i] = r.Status
		}(i)
	}
	wg.Wait()
	granted, refused := 0, 0
	for _, s := range statuses {
		switch s {
		case 204:
			granted++
		case 409:
			refused++
		default:
			t.Errorf("unexpected status %d", s)
		}
	}
	if granted != capacity || refused != claimants-capacity {
		t.Fatalf("granted %d refused %d, want %d and %d", granted, refused, capacity, claimants-capacity)
	}
	_, held, err := e.Store.ProviderAllocations(context.Background(), alRP2)
	if err != nil {
		t.Fatal(err)
	}
	if len(held) != capacity {
		t.Fatalf("%d consumers hold allocations, want %d", len(held), capacity)
	}
	p, err := e.Store.GetProvider(context.Background(), alRP2)
	if err != nil {
		t.Fatal(err)
	}
	if p.Generation != int64(1+capacity) {
		t.Fatalf("generation %d, want %d", p.Generation, 1+capacity)
	}
}

func TestReshaperAllOrNothing(t *testing.T) {
	e := newAlEnv(t)
	if r := e.putAllocs(alConsumer, "1.38", `{"allocations": {"`+alRP+`": {"resources": {"VCPU": 2, "DISK_GB": 20}}}, "project_id": "p", "user_id": "u", "consumer_generation": null, "consumer_type": "INSTANCE"}`); r.Status != 204 {
		t.Fatalf("seed: %d %s", r.Status, r.Body)
	}
	before := e.snapshot()
	// Move DISK_GB from rp1 to rp2 but leave the allocation on rp1: the
	// final inventory of rp1 drops DISK_GB while in use.
	bad := `{"inventories": {
		"` + alRP + `": {"resource_provider_generation": 2, "inventories": {"VCPU": {"total": 8, "max_unit": 4}}},
		"` + alRP2 + `": {"resource_provider_generation": 1, "inventories": {"VCPU": {"total": 4}, "DISK_GB": {"total": 100, "step_size": 10, "min_unit": 10}}}},
		"allocations": {"` + alConsumer + `": {"allocations": {"` + alRP + `": {"resources": {"VCPU": 2, "DISK_GB": 20}}}, "project_id": "p", "user_id": "u", "consumer_generation": 1, "consumer_type": "INSTANCE"}}}`
	r := e.do(t, call{Method: "POST", Path: "/reshaper", Version: "1.38", ContentType: "application/json", Body: bad})
	alWantError(t, r, 409, apierror.CodeInventoryInUse, "update conflict: Inventory for 'DISK_GB' on resource provider '"+alRP+"' in use.")
	if after := e.snapshot(); after != before {
		t.Fatalf("state changed:\nbefore %s\nafter %s", before, after)
	}
	stale := strings.Replace(bad, `"resource_provider_generation": 2`, `"resource_provider_generation": 1`, 1)
	r = e.do(t, call{Method: "POST", Path: "/reshaper", Version: "1.38", ContentType: "application/json", Body: stale})
	alWantError(t, r, 409, apierror.CodeConcurrentUpdate, "resource provider generation conflict for provider "+alRP+": actual: 2, given: 1")
	if after := e.snapshot(); after != before {
		t.Fatalf("state changed:\nbefore %s\nafter %s", before, after)
	}
	good := strings.Replace(bad, `"`+alRP+`": {"resources": {"VCPU": 2, "DISK_GB": 20}}`,
		`"`+alRP+`": {"resources": {"VCPU": 2}}, "`+alRP2+`": {"resources": {"DISK_GB": 20}}`, 1)
	if r = e.do(t, call{Method: "POST", Path: "/reshaper", Version: "1.38", ContentType: "application/json", Body: good}); r.Status != 204 {
		t.Fatalf("reshape: %d %s", r.Status, r.Body)
	}
	// rp1: interim +1, allocations +1, final +1; rp2 likewise.
	for uuid, gen := range map[string]int64{alRP: 5, alRP2: 4} {
		p, err := e.Store.GetProvider(context.Background(), uuid)
		if err != nil {
			t.Fatal(err)
		}
		if p.Generation != gen {
			t.Errorf("%s generation %d, want %d", uuid, p.Generation, gen)
		}
	}
	r = e.do(t, call{Method: "GET", Path: "/allocations/" + alConsumer, Version: "1.38"})
	var got struct {
		Allocations map[string]struct {
			Resources map[string]int64 `json:"resources"`
		} `json:"allocations"`
		ConsumerGen int64 `json:"consumer_generation"`
	}
	if err := json.Unmarshal(r.Body, &got); err != nil {
		t.Fatal(err)
	}
	if got.Allocations[alRP2].Resources["DISK_GB"] != 20 || got.Allocations[alRP].Resources["VCPU"] != 2 || got.ConsumerGen != 2 {
		t.Fatalf("after reshape: %s", r.Body)
	}
}
