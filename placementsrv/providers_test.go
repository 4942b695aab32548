package placementsrv

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
)

const (
	rootUUID  = "6f4c3d2a-1b0e-4f9a-8c7d-5e4f3a2b1c0d"
	childUUID = "0a1b2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d"
	otherUUID = "11111111-2222-4333-8444-555555555555"
)

// providerTree creates root, its child and an unrelated root.
func providerTree(t *testing.T, ts *testServer) {
	t.Helper()
	ts.must(t, http.StatusOK, call{Method: "POST", Path: "/resource_providers", Version: "1.39",
		Body: `{"name": "root", "uuid": "` + rootUUID + `"}`})
	ts.must(t, http.StatusOK, call{Method: "POST", Path: "/resource_providers", Version: "1.39",
		Body: `{"name": "child", "uuid": "` + childUUID + `", "parent_provider_uuid": "` + rootUUID + `"}`})
	ts.must(t, http.StatusOK, call{Method: "POST", Path: "/resource_providers", Version: "1.39",
		Body: `{"name": "other", "uuid": "` + otherUUID + `"}`})
}

// snapshot is the full provider list, to show a rejected request changed
// nothing.
func snapshot(t *testing.T, ts *testServer) []byte {
	t.Helper()
	return ts.must(t, http.StatusOK, call{Method: "GET", Path: "/resource_providers", Version: "1.39"}).Body
}

type badCase struct {
	name   string
	c      call
	status int
	detail string // substring of the error detail
	code   string // expected error code, when the version shows codes
	noJSON bool   // the answer is not a Placement error document
}

func runBadCases(t *testing.T, cases []badCase) {
	t.Helper()
	ts := startTestServer(t)
	providerTree(t, ts)
	before := snapshot(t, ts)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := ts.do(t, tc.c)
			if r.Status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.Status, tc.status, r.Body)
			}
			if tc.noJSON {
				if !strings.Contains(string(r.Body), tc.detail) {
					t.Errorf("body %q does not contain %q", r.Body, tc.detail)
				}
				return
			}
			detail, code := errorDetail(t, r)
			if !strings.Contains(detail, tc.detail) {
				t.Errorf("detail %q does not contain %q", detail, tc.detail)
			}
			if tc.code != "" && code != tc.code {
				t.Errorf("code %q, want %q", code, tc.code)
			}
			if after := snapshot(t, ts); !bytes.Equal(before, after) {
				t.Errorf("state changed:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}

func TestCreateProviderBadInput(t *testing.T) {
	post := func(version, body string) call {
		return call{Method: "POST", Path: "/resource_providers", Version: version, Body: body}
	}
	long := strings.Repeat("x", 201)
	runBadCases(t, []badCase{
		{"malformed json", post("1.39", `{"name": }`), 400, "Malformed JSON: Expecting value: line 1 column 10 (char 9)", "placement.undefined_code", false},
		{"trailing data", post("1.39", `{"name": "a"} x`), 400, "Malformed JSON: Extra data: line 1 column 15 (char 14)", "", false},
		{"trailing comma", post("1.39", "{\"name\": \"é\",\n}"), 400, "Malformed JSON: Expecting property name enclosed in double quotes: line 2 column 1 (char 14)", "", false},
		{"name wrong type", post("1.39", `{"name": 5}`), 400, "JSON does not validate: 5 is not of type 'string'", "", false},
		{"body not an object", post("1.39", `["a"]`), 400, "is not of type 'object'", "", false},
		{"name missing", post("1.39", `{"uuid": "`+otherUUID+`"}`), 400, "'name' is a required property", "", false},
		{"unknown property", post("1.39", `{"name": "n", "colour": "blue"}`), 400, "Additional properties are not allowed", "", false},
		{"bad uuid", post("1.39", `{"name": "n", "uuid": "not-a-uuid"}`), 400, "Failed validating 'format'", "", false},
		{"name too long", post("1.39", `{"name": "`+long+`"}`), 400, "Failed validating 'maxLength'", "", false},
		{"parent before 1.14", post("1.13", `{"name": "n", "parent_provider_uuid": "`+rootUUID+`"}`), 400, "Additional properties are not allowed", "", false},
		{"bad parent uuid", post("1.39", `{"name": "n", "parent_provider_uuid": "nope"}`), 400, "JSON does not validate", "", false},
		{"empty name", post("1.39", `{"name": ""}`), 400, "Object action create failed because: name is required", "", false},
		{"self parent", post("1.39", `{"name": "n", "uuid": "`+strings.ReplaceAll(otherUUID, "1", "9")+`", "parent_provider_uuid": "`+strings.ReplaceAll(otherUUID, "1", "9")+`"}`), 400, "parent provider UUID cannot be same as UUID", "", false},
		{"missing parent", post("1.39", `{"name": "n", "parent_provider_uuid": "`+strings.ReplaceAll(rootUUID, "6", "7")+`"}`), 400, `Unable to create resource provider "n", `, "", false},
		{"duplicate name", post("1.39", `{"name": "root"}`), 409, "Conflicting resource provider name: root already exists.", "placement.duplicate_name", false},
		{"duplicate uuid without dashes", post("1.39", `{"name": "n", "uuid": "`+strings.ReplaceAll(rootUUID, "-", "")+`"}`), 409, "Conflicting resource provider uuid: " + rootUUID + " already exists.", "placement.duplicate_name", false},
		{"wrong content type", call{Method: "POST", Path: "/resource_providers", Version: "1.39", Body: `{"name": "n"}`, Headers: map[string]string{"Content-Type": "text/plain"}}, 415, "The media type text/plain is not supported, use application/json", "", false},
		{"not admin", call{Method: "POST", Path: "/resource_providers", Version: "1.39", Body: `{"name": "n"}`, Headers: map[string]string{"X-Auth-Token": "user"}}, 403, "Policy does not allow placement:resource_providers:create to be performed.", "", false},
		{"unsupported microversion", post("1.99", `{"name": "n"}`), 406, "Unacceptable version header: 1.99", "", false},
		{"malformed microversion", post("one.two", `{"name": "n"}`), 400, "invalid version string: one.two; invalid literal for int() with base 10: 'one'", "", false},
		{"word microversion", post("LATEST", `{"name": "n"}`), 400, "invalid version string: LATEST; invalid literal for int() with base 10: 'LATEST'", "", false},
		{"lone major", post("1", `{"name": "n"}`), 400, "invalid version string: 1; Version.__new__() missing 1 required positional argument: 'minor'", "", false},
		{"quote in microversion", post("1.25'", `{"name": "n"}`), 400, `invalid version string: 1.25'; invalid literal for int() with base 10: "25'"`, "", false},
		{"huge microversion", post("1.99999999999999999999", `{"name": "n"}`), 406, "Unacceptable version header: 1.99999999999999999999", "", false},
	})
}

func TestUpdateProviderBadInput(t *testing.T) {
	put := func(version, uuid, body string) call {
		return call{Method: "PUT", Path: "/resource_providers/" + uuid, Version: version, Body: body}
	}
	runBadCases(t, []badCase{
		{"malformed json", put("1.39", rootUUID, `{"name"`), 400, "Malformed JSON", "", false},
		{"name wrong type", put("1.39", rootUUID, `{"name": null}`), 400, "None is not of type 'string'", "", false},
		{"uuid not settable", put("1.39", rootUUID, `{"name": "n", "uuid": "`+otherUUID+`"}`), 400, "Additional properties are not allowed", "", false},
		{"name too long", put("1.39", rootUUID, `{"name": "`+strings.Repeat("é", 201)+`"}`), 400, "Failed validating 'maxLength'", "", false},
		{"parent before 1.14", put("1.13", otherUUID, `{"name": "other", "parent_provider_uuid": "`+rootUUID+`"}`), 400, "Additional properties are not allowed", "", false},
		{"missing parent", put("1.39", otherUUID, `{"name": "other", "parent_provider_uuid": "`+strings.ReplaceAll(rootUUID, "6", "7")+`"}`), 400, "Unable to save resource provider " + otherUUID + ": Object action create failed because: parent provider UUID does not exist.", "", false},
		{"parent is itself", put("1.39", rootUUID, `{"name": "root", "parent_provider_uuid": "`+rootUUID+`"}`), 400, "creating loop in the provider tree is not allowed.", "", false},
		{"parent is a child", put("1.39", rootUUID, `{"name": "root", "parent_provider_uuid": "`+childUUID+`"}`), 400, "creating loop in the provider tree is not allowed.", "", false},
		{"re-parent before 1.37", put("1.36", childUUID, `{"name": "child", "parent_provider_uuid": "`+otherUUID+`"}`), 400, "re-parenting a provider is not currently allowed.", "", false},
		{"un-parent before 1.37", put("1.36", childUUID, `{"name": "child", "parent_provider_uuid": null}`), 400, "un-parenting a provider is not currently allowed.", "", false},
		{"duplicate name", put("1.39", otherUUID, `{"name": "root"}`), 409, "Conflicting resource provider root already exists.", "placement.duplicate_name", false},
		{"unknown provider", put("1.39", strings.ReplaceAll(rootUUID, "6", "7"), `{"name": "x"}`), 404, "No resource provider with uuid", "", false},
		{"no content type", call{Method: "PUT", Path: "/resource_providers/" + rootUUID}, 415, "The media type None is not supported", "", false},
	})
}

func TestListProvidersBadQuery(t *testing.T) {
	get := func(version, query string) call {
		return call{Method: "GET", Path: "/resource_providers?" + query, Version: version}
	}
	const agg = "9c0c7c6e-5d4e-4b3a-8a29-1f0e9d8c7b6a"
	runBadCases(t, []badCase{
		{"bad uuid", get("1.39", "uuid=spameggs"), 400, "Invalid query string parameters", "", false},
		{"unknown parameter", get("1.39", "spam=eggs"), 400, "Invalid query string parameters: Additional properties are not allowed", "", false},
		{"required before 1.18", get("1.17", "required=HW_CPU_X86_SSE"), 400, "Additional properties are not allowed", "", false},
		{"resources before 1.4", get("1.3", "resources=VCPU:1"), 400, "Additional properties are not allowed", "", false},
		{"in_tree not a uuid", get("1.39", "in_tree=tree"), 400, "Invalid query string parameters", "", false},
		{"empty required", get("1.39", "required="), 400, "Expected 'required' parameter value of the form: HW_CPU_X86_VMX,!CUSTOM_MAGIC. Got an empty trait in: ", "", false},
		{"empty required 1.21", get("1.21", "required="), 400, "Expected 'required' parameter value of the form: HW_CPU_X86_VMX,CUSTOM_MAGIC.", "", false},
		{"forbidden before 1.22", get("1.21", "required=!HW_CPU_X86_SSE"), 400, "Got: !HW_CPU_X86_SSE", "", false},
		{"any-of before 1.39", get("1.38", "required=in:A,B"), 400, "only supported since microversion 1.39", "", false},
		{"any-of with forbidden", get("1.39", "required=in:HW_CPU_X86_SSE,!B"), 400, "does not support forbidden traits", "", false},
		{"unknown trait", get("1.39", "required=HW_CPU_X86_SSE,BOGUS_TRAIT"), 400, `Invalid trait(s) in "required" parameter: No such trait(s): BOGUS_TRAIT.`, "", false},
		{"unknown resource class", get("1.39", "resources=VCPU:1,CUSTOM_NOPE:2"), 400, "Invalid resource class in resources parameter: No such resource class CUSTOM_NOPE.", "", false},
		{"resources without amount", get("1.39", "resources=VCPU"), 400, "Badly formed resources parameter. Expected resources query string parameter in form: ?resources=VCPU:2,MEMORY_MB:1024. Got: VCPU.", "", false},
		{"resources empty", get("1.39", "resources="), 400, "Got: empty string.", "", false},
		{"resources amount not integer", get("1.39", "resources=VCPU:two"), 400, "Requested resource VCPU expected positive integer amount. Got: two.", "", false},
		{"resources amount zero", get("1.39", "resources=VCPU:0"), 400, "Requested resource VCPU requires amount >= 1. Got: 0.", "", false},
		{"member_of not a uuid", get("1.39", "member_of=agg"), 400, "Expected 'member_of' parameter to contain valid UUID(s). Got: agg", "", false},
		{"member_of list without in", get("1.39", "member_of="+agg+","+agg), 400, "Multiple values for 'member_of' must be prefixed with the 'in:' or '!in:' keyword", "", false},
		{"member_of repeated before 1.24", get("1.23", "member_of="+agg+"&member_of="+agg), 400, "Multiple member_of parameters are not supported", "", false},
		{"member_of forbidden before 1.32", get("1.31", "member_of=!"+agg), 400, "Forbidden member_of parameters are not supported in the specified microversion", "", false},
		{"not admin", call{Method: "GET", Path: "/resource_providers", Version: "1.39", Headers: map[string]string{"X-Auth-Token": "user"}}, 403, "Policy does not allow placement:resource_providers:list to be performed.", "", false},
		{"bad accept", call{Method: "GET", Path: "/resource_providers", Headers: map[string]string{"Accept": "text/plain"}}, 406, "406 Not Acceptable\n\n", "", true},
	})
}

func TestDeleteProviderErrors(t *testing.T) {
	runBadCases(t, []badCase{
		{"parent with child", call{Method: "DELETE", Path: "/resource_providers/" + rootUUID, Version: "1.39"}, 409,
			"Unable to delete parent resource provider " + rootUUID + ": It has child resource providers.", "placement.resource_provider.cannot_delete_parent", false},
		{"not admin", call{Method: "DELETE", Path: "/resource_providers/" + otherUUID, Version: "1.39", Headers: map[string]string{"X-Auth-Token": "user"}}, 403, "Policy does not allow placement:resource_providers:delete", "", false},
		{"unknown", call{Method: "DELETE", Path: "/resource_providers/" + strings.ReplaceAll(rootUUID, "6", "7"), Version: "1.39"}, 404,
			"found for delete", "", false},
	})
}

func TestProviderLifecycle(t *testing.T) {
	ts := startTestServer(t)

	// Before 1.20 a create answers 201 with a Location and no body.
	r := ts.must(t, http.StatusCreated, call{Method: "POST", Path: "/resource_providers", Version: "1.19",
		Body: `{"name": "old", "uuid": "{` + strings.ToUpper(strings.ReplaceAll(otherUUID, "-", "")) + `}"}`})
	if loc := r.Header.Get("Location"); loc != ts.URL+"/resource_providers/"+otherUUID {
		t.Errorf("Location %q", loc)
	}
	if len(r.Body) != 0 || r.Header.Get("Content-Type") != "" {
		t.Errorf("1.19 create has a body %q or content type %q", r.Body, r.Header.Get("Content-Type"))
	}

	providerTreeFrom(t, ts)

	// The list is in creation order; 1.14 adds parent and root.
	doc := ts.must(t, http.StatusOK, call{Method: "GET", Path: "/resource_providers", Version: "1.14"}).JSON(t)
	rps := doc["resource_providers"].([]any)
	var names []string
	for _, rp := range rps {
		names = append(names, rp.(map[string]any)["name"].(string))
	}
	if got := strings.Join(names, ","); got != "old,root,child" {
		t.Errorf("order %s", got)
	}
	child := rps[2].(map[string]any)
	if child["parent_provider_uuid"] != rootUUID || child["root_provider_uuid"] != rootUUID {
		t.Errorf("child %v", child)
	}
	if len(child["links"].([]any)) != 6 {
		t.Errorf("links at 1.14: %v", child["links"])
	}

	// in_tree selects the whole tree.
	doc = ts.must(t, http.StatusOK, call{Method: "GET", Path: "/resource_providers?in_tree=" + childUUID, Version: "1.14"}).JSON(t)
	if n := len(doc["resource_providers"].([]any)); n != 2 {
		t.Errorf("in_tree gave %d providers", n)
	}

	// Un-parent then re-parent under another root at 1.37.
	p := ts.must(t, http.StatusOK, call{Method: "PUT", Path: "/resource_providers/" + childUUID, Version: "1.37",
		Body: `{"name": "child", "parent_provider_uuid": null}`}).JSON(t)
	if p["parent_provider_uuid"] != nil || p["root_provider_uuid"] != childUUID {
		t.Errorf("un-parented %v", p)
	}
	p = ts.must(t, http.StatusOK, call{Method: "PUT", Path: "/resource_providers/" + rootUUID, Version: "1.37",
		Body: `{"name": "root", "parent_provider_uuid": "` + otherUUID + `"}`}).JSON(t)
	if p["root_provider_uuid"] != otherUUID {
		t.Errorf("re-parented %v", p)
	}

	// A renamed provider keeps its generation; the update answers with
	// cache headers at 1.15.
	r = ts.must(t, http.StatusOK, call{Method: "PUT", Path: "/resource_providers/" + childUUID, Version: "1.15",
		Body: `{"name": "renamed"}`})
	if r.Header.Get("Cache-Control") != "no-cache" || r.Header.Get("Last-Modified") == "" {
		t.Errorf("cache headers %v", r.Header)
	}
	if g := r.JSON(t)["generation"]; g != float64(0) {
		t.Errorf("generation %v", g)
	}

	// Deleting a parent fails, its child first then it succeeds.
	ts.must(t, http.StatusConflict, call{Method: "DELETE", Path: "/resource_providers/" + otherUUID, Version: "1.39"})
	ts.must(t, http.StatusNoContent, call{Method: "DELETE", Path: "/resource_providers/" + rootUUID, Version: "1.39"})
	ts.must(t, http.StatusNoContent, call{Method: "DELETE", Path: "/resource_providers/" + otherUUID, Version: "1.39"})
	ts.must(t, http.StatusNotFound, call{Method: "GET", Path: "/resource_providers/" + otherUUID, Version: "1.39"})

	// An empty list still has cache headers at 1.15, none before.
	ts.must(t, http.StatusNoContent, call{Method: "DELETE", Path: "/resource_providers/" + childUUID, Version: "1.39"})
	r = ts.must(t, http.StatusOK, call{Method: "GET", Path: "/resource_providers", Version: "1.15"})
	if string(r.Body) != `{"resource_providers":[]}` || r.Header.Get("Last-Modified") == "" {
		t.Errorf("empty list %s %v", r.Body, r.Header)
	}
	r = ts.must(t, http.StatusOK, call{Method: "GET", Path: "/resource_providers", Version: "1.14"})
	if r.Header.Get("Last-Modified") != "" || r.Header.Get("Cache-Control") != "" {
		t.Errorf("cache headers before 1.15: %v", r.Header)
	}
}

// providerTreeFrom creates root and child (not other).
func providerTreeFrom(t *testing.T, ts *testServer) {
	t.Helper()
	ts.must(t, http.StatusOK, call{Method: "POST", Path: "/resource_providers", Version: "1.20",
		Body: `{"name": "root", "uuid": "` + rootUUID + `"}`})
	ts.must(t, http.StatusCreated, call{Method: "POST", Path: "/resource_providers", Version: "1.14",
		Body: `{"name": "child", "uuid": "` + childUUID + `", "parent_provider_uuid": "` + rootUUID + `"}`})
}
