package reconciler

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/placement-syncd/placement-syncd/testkit/placementtest"
)

type allocationRequest struct {
	Allocations map[string]any `json:"allocations"`
}

// openGate is an OwnerNovaGate that is always open.
type openGate struct{}

func (openGate) OwnerNovaGateOpen() bool { return true }

// TestPrefilter_CyborgChildParity is Why §2 on both servers: a Nova root
// (OWNER_NOVA, VCPU) with a Cyborg child (OWNER_CYBORG, VGPU:4). Our
// server, pre-filter on, answers user nova's plain query; the reference
// answers the query with the traits the pre-filter adds written out.
// Both must agree, and neither may hand out the Cyborg child, in the
// unnumbered group or in a granular one.
func TestPrefilter_CyborgChildParity(t *testing.T) {
	t.Parallel()
	cases := []struct{ plain, rewritten string }{
		{"resources=VCPU:1,VGPU:1", "resources=VCPU:1,VGPU:1&required=!OWNER_CYBORG&root_required=OWNER_NOVA"},
		{"resources=VCPU:1&resources1=VGPU:1", "resources=VCPU:1&required=!OWNER_CYBORG&resources1=VGPU:1&required1=!OWNER_CYBORG&root_required=OWNER_NOVA"},
		{"resources1=VGPU:1&required1=OWNER_CYBORG", "resources1=VGPU:1&required1=OWNER_CYBORG&root_required=OWNER_NOVA"},
	}
	root, child := uuidN("d0d0d0d0", 1), uuidN("d0d0d0d0", 2)
	answers := map[string][]int{}
	for _, kind := range placementtest.Kinds() {
		var srv *placementtest.Server
		if kind == placementtest.Ours {
			srv = placementtest.StartOurs(t, placementtest.Options{OwnerNovaGate: openGate{}, SchedulerUsers: []string{"nova"}})
		} else {
			srv = placementtest.StartReference(t)
		}
		e := &env{srv: srv}
		e.provider(t, root, "cn1", "", "OWNER_NOVA")
		e.provider(t, child, "cn1-vgpu0", root, "OWNER_CYBORG")
		srv.MustDo(t, 200, "PUT", "/resource_providers/"+root+"/inventories", "1.39",
			map[string]any{"resource_provider_generation": 1, "inventories": map[string]any{"VCPU": map[string]any{"total": 8}}})
		srv.MustDo(t, 200, "PUT", "/resource_providers/"+child+"/inventories", "1.39",
			map[string]any{"resource_provider_generation": 1, "inventories": map[string]any{"VGPU": map[string]any{"total": 4}}})
		for _, c := range cases {
			q := c.plain
			if kind == placementtest.Reference {
				q = c.rewritten
			}
			st, b := doAs(t, srv, "nova", "/allocation_candidates?"+q)
			var doc struct {
				AllocationRequests []allocationRequest `json:"allocation_requests"`
			}
			if st != 200 || json.Unmarshal(b, &doc) != nil {
				t.Fatalf("%s %s: %d %s", kind, q, st, b)
			}
			usesChild := slices.ContainsFunc(doc.AllocationRequests, func(a allocationRequest) bool {
				_, ok := a.Allocations[child]
				return ok
			})
			wantChild := c.plain == cases[2].plain
			if usesChild != wantChild {
				t.Errorf("%s %s: Cyborg child used %v, want %v: %s", kind, q, usesChild, wantChild, b)
			}
			answers[c.plain] = append(answers[c.plain], len(doc.AllocationRequests))
		}
	}
	for q, n := range answers {
		if len(n) != 2 || n[0] != n[1] {
			t.Errorf("%s: ours and the reference disagree: %v candidates", q, n)
		}
	}
}
