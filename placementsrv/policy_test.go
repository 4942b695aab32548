package placementsrv

import (
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
)

// TestNonAdminIsForbidden checks that every route answers 403 naming its
// policy rule to a token without the admin role, and writes nothing.
func TestNonAdminIsForbidden(t *testing.T) {
	ts := startTestServer(t)
	const rp = "11111111-2222-3333-4444-555555555555"
	ts.must(t, 200, call{Method: "POST", Path: "/resource_providers", Version: "1.39", Body: `{"name": "rp1", "uuid": "` + rp + `"}`})
	user := map[string]string{"X-Auth-Token": "user"}
	cases := []struct {
		method, path, body, rule string
	}{
		{"GET", "/resource_providers", "", policyRPList},
		{"POST", "/resource_providers", `{"name": "x"}`, policyRPCreate},
		{"GET", "/resource_providers/" + rp, "", policyRPShow},
		{"PUT", "/resource_providers/" + rp, `{"name": "y"}`, policyRPUpdate},
		{"DELETE", "/resource_providers/" + rp, "", policyRPDelete},
		{"GET", "/resource_providers/" + rp + "/inventories", "", policyInventoryList},
		{"POST", "/resource_providers/" + rp + "/inventories", `{"resource_class": "VCPU", "total": 1}`, policyInventoryCreate},
		{"PUT", "/resource_providers/" + rp + "/inventories", `{"resource_provider_generation": 0, "inventories": {}}`, policyInventoryUpdate},
		{"DELETE", "/resource_providers/" + rp + "/inventories", "", policyInventoryDelete},
		{"GET", "/resource_providers/" + rp + "/inventories/VCPU", "", policyInventoryShow},
		{"PUT", "/resource_providers/" + rp + "/inventories/VCPU", `{"resource_provider_generation": 0, "total": 1}`, policyInventoryUpdate},
		{"DELETE", "/resource_providers/" + rp + "/inventories/VCPU", "", policyInventoryDelete},
		{"GET", "/resource_providers/" + rp + "/usages", "", policyRPUsages},
		{"GET", "/resource_providers/" + rp + "/aggregates", "", policyAggregateList},
		{"PUT", "/resource_providers/" + rp + "/aggregates", `{"aggregates": [], "resource_provider_generation": 0}`, policyAggregateUpdate},
		{"GET", "/resource_providers/" + rp + "/allocations", "", policyRPAllocationList},
		{"GET", "/resource_providers/" + rp + "/traits", "", policyRPTraitList},
		{"PUT", "/resource_providers/" + rp + "/traits", `{"traits": [], "resource_provider_generation": 0}`, policyRPTraitUpdate},
		{"DELETE", "/resource_providers/" + rp + "/traits", "", policyRPTraitDelete},
		{"POST", "/allocations", `{}`, policyAllocManage},
		{"GET", "/allocations/" + rp, "", policyAllocList},
		{"PUT", "/allocations/" + rp, `{"allocations": {}}`, policyAllocUpdate},
		{"DELETE", "/allocations/" + rp, "", policyAllocDelete},
		{"GET", "/traits", "", policyTraitList},
		{"GET", "/traits/CUSTOM_X", "", policyTraitShow},
		{"PUT", "/traits/CUSTOM_X", "", policyTraitUpdate},
		{"DELETE", "/traits/CUSTOM_X", "", policyTraitDelete},
		{"GET", "/resource_classes", "", policyClassList},
		{"POST", "/resource_classes", `{"name": "CUSTOM_X"}`, policyClassCreate},
		{"GET", "/resource_classes/VCPU", "", policyClassShow},
		{"PUT", "/resource_classes/CUSTOM_X", "", policyClassUpdate},
		{"DELETE", "/resource_classes/CUSTOM_X", "", policyClassDelete},
		{"GET", "/usages?project_id=p", "", policyTotalUsages},
		{"POST", "/reshaper", `{}`, policyReshape},
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
