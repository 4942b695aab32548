package placementsrv

import (
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
	"github.com/placement-syncd/placement-syncd/placementsrv/policy"
	"github.com/placement-syncd/placement-syncd/placementsrv/release"
)

// TestPolicyRefusesNonAdmin checks that every route answers 403 naming its
// policy rule to a token without the admin role, and writes nothing,
// under either release's rules in its legacy mode.
func TestPolicyRefusesNonAdmin(t *testing.T) {
	for _, r := range []release.Release{release.V8, release.V15} {
		t.Run(r.String(), func(t *testing.T) {
			testNonAdminIsForbidden(t, startServerWith(t, func(o *Options) { o.Release = r }))
		})
	}
}

func testNonAdminIsForbidden(t *testing.T, ts *testServer) {
	const rp = "11111111-2222-3333-4444-555555555555"
	ts.must(t, 200, call{Method: "POST", Path: "/resource_providers", Version: "1.39", Body: `{"name": "rp1", "uuid": "` + rp + `"}`})
	user := map[string]string{"X-Auth-Token": "user"}
	cases := []struct {
		method, path, body, rule string
	}{
		{"GET", "/resource_providers", "", policy.RPList},
		{"POST", "/resource_providers", `{"name": "x"}`, policy.RPCreate},
		{"GET", "/resource_providers/" + rp, "", policy.RPShow},
		{"PUT", "/resource_providers/" + rp, `{"name": "y"}`, policy.RPUpdate},
		{"DELETE", "/resource_providers/" + rp, "", policy.RPDelete},
		{"GET", "/resource_providers/" + rp + "/inventories", "", policy.InventoryList},
		{"POST", "/resource_providers/" + rp + "/inventories", `{"resource_class": "VCPU", "total": 1}`, policy.InventoryCreate},
		{"PUT", "/resource_providers/" + rp + "/inventories", `{"resource_provider_generation": 0, "inventories": {}}`, policy.InventoryUpdate},
		{"DELETE", "/resource_providers/" + rp + "/inventories", "", policy.InventoryDelete},
		{"GET", "/resource_providers/" + rp + "/inventories/VCPU", "", policy.InventoryShow},
		{"PUT", "/resource_providers/" + rp + "/inventories/VCPU", `{"resource_provider_generation": 0, "total": 1}`, policy.InventoryUpdate},
		{"DELETE", "/resource_providers/" + rp + "/inventories/VCPU", "", policy.InventoryDelete},
		{"GET", "/resource_providers/" + rp + "/usages", "", policy.RPUsages},
		{"GET", "/resource_providers/" + rp + "/aggregates", "", policy.AggregateList},
		{"PUT", "/resource_providers/" + rp + "/aggregates", `{"aggregates": [], "resource_provider_generation": 0}`, policy.AggregateUpdate},
		{"GET", "/resource_providers/" + rp + "/allocations", "", policy.RPAllocationList},
		{"GET", "/resource_providers/" + rp + "/traits", "", policy.RPTraitList},
		{"PUT", "/resource_providers/" + rp + "/traits", `{"traits": [], "resource_provider_generation": 0}`, policy.RPTraitUpdate},
		{"DELETE", "/resource_providers/" + rp + "/traits", "", policy.RPTraitDelete},
		{"POST", "/allocations", `{}`, policy.AllocManage},
		{"GET", "/allocations/" + rp, "", policy.AllocList},
		{"PUT", "/allocations/" + rp, `{"allocations": {}}`, policy.AllocUpdate},
		{"DELETE", "/allocations/" + rp, "", policy.AllocDelete},
		{"GET", "/traits", "", policy.TraitList},
		{"GET", "/traits/CUSTOM_X", "", policy.TraitShow},
		{"PUT", "/traits/CUSTOM_X", "", policy.TraitUpdate},
		{"DELETE", "/traits/CUSTOM_X", "", policy.TraitDelete},
		{"GET", "/resource_classes", "", policy.ClassList},
		{"POST", "/resource_classes", `{"name": "CUSTOM_X"}`, policy.ClassCreate},
		{"GET", "/resource_classes/VCPU", "", policy.ClassShow},
		{"PUT", "/resource_classes/CUSTOM_X", "", policy.ClassUpdate},
		{"DELETE", "/resource_classes/CUSTOM_X", "", policy.ClassDelete},
		{"GET", "/usages?project_id=p", "", policy.TotalUsages},
		{"POST", "/reshaper", `{}`, policy.Reshape},
	}
	for _, tc := range cases {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			r := ts.must(t, 403, call{Method: tc.method, Path: tc.path, Version: "1.39", Body: tc.body, Headers: user})
			detail, code := errorDetail(t, r)
			if want := "Policy does not allow " + tc.rule + " to be performed."; !strings.Contains(detail, want) {
				t.Errorf("detail %q does not contain %q", detail, want)
			}
			if code != apierror.CodeDefault {
				t.Errorf("code %q", code)
			}
		})
	}
	// Nothing was written: the provider is unchanged and alone.
	r := ts.must(t, 200, call{Method: "GET", Path: "/resource_providers/" + rp, Version: "1.39"})
	if got := r.JSON(t); got["name"] != "rp1" || got["generation"] != float64(0) {
		t.Errorf("provider changed: %v", got)
	}
	r = ts.must(t, 200, call{Method: "GET", Path: "/resource_providers", Version: "1.39"})
	if n := len(r.JSON(t)["resource_providers"].([]any)); n != 1 {
		t.Errorf("%d providers, want 1", n)
	}
	ts.must(t, 404, call{Method: "GET", Path: "/traits/CUSTOM_X", Version: "1.39"})
}
