package placementsrv

import (
	"fmt"
	"strings"
	"testing"
)

// TestOwnerNovaPrefilter_CyborgChild is the collision the OWNER_NOVA spec
// exists to prevent: a Nova root (OWNER_NOVA, VCPU) with a Cyborg child
// (OWNER_CYBORG, VGPU:4). root_required=OWNER_NOVA alone lets the
// scheduler take the child's VGPU; the pre-filter must keep it out of
// the unnumbered group and of a granular group alike, while a group that
// asks for OWNER_CYBORG (a device profile) still gets it.
func TestOwnerNovaPrefilter_CyborgChild(t *testing.T) {
	const root, child = "00000000-0000-0000-0000-0000000000a1", "00000000-0000-0000-0000-0000000000a2"
	tests := []struct {
		query     string
		user      string
		wantChild bool // the Cyborg child appears in some candidate
		want      int
	}{
		{query: "resources=VCPU:1,VGPU:1", user: "nova", want: 0},
		{query: "resources=VCPU:1&resources1=VGPU:1", user: "nova", want: 0},
		{query: "resources1=VGPU:1", user: "nova", want: 0},
		// Cyborg's device-profile group names its owner and keeps it.
		{query: "resources=VCPU:1&resources1=VGPU:1&required1=OWNER_CYBORG", user: "nova", wantChild: true, want: 1},
		// Other users are not filtered.
		{query: "resources=VCPU:1,VGPU:1", user: "admin", wantChild: true, want: 1},
		{query: "resources1=VGPU:1", user: "admin", wantChild: true, want: 1},
	}
	ts := startServerWith(t, func(o *Options) {
		o.OwnerNovaPrefilter, o.SchedulerUsers = PrefilterOn, []string{"nova"}
	})
	for _, p := range []struct{ uuid, name, parent, inv, trait string }{
		{root, "cn1", "", `{"VCPU":{"total":8}}`, "OWNER_NOVA"},
		{child, "cn1-vgpu0", root, `{"VGPU":{"total":4}}`, "OWNER_CYBORG"},
	} {
		parent := ""
		if p.parent != "" {
			parent = fmt.Sprintf(`,"parent_provider_uuid":%q`, p.parent)
		}
		ts.must(t, 200, call{Method: "POST", Path: "/resource_providers", Version: "1.39", Body: fmt.Sprintf(`{"name":%q,"uuid":%q%s}`, p.name, p.uuid, parent)})
		ts.must(t, 200, call{Method: "PUT", Path: "/resource_providers/" + p.uuid + "/inventories", Version: "1.39",
			Body: fmt.Sprintf(`{"resource_provider_generation":0,"inventories":%s}`, p.inv)})
		ts.must(t, 200, call{Method: "PUT", Path: "/resource_providers/" + p.uuid + "/traits", Version: "1.39",
			Body: fmt.Sprintf(`{"resource_provider_generation":1,"traits":[%q]}`, p.trait)})
	}
	for _, tt := range tests {
		t.Run(tt.user+" "+tt.query, func(t *testing.T) {
			r := ts.must(t, 200, call{Method: "GET", Path: "/allocation_candidates?" + tt.query, Version: "1.39",
				Headers: map[string]string{"X-Auth-Token": tt.user, "X-Roles": "admin"}})
			reqs := r.JSON(t)["allocation_requests"].([]any)
			used := false
			for _, ar := range reqs {
				_, in := ar.(map[string]any)["allocations"].(map[string]any)[child]
				used = used || in
			}
			if len(reqs) != tt.want || used != tt.wantChild {
				t.Fatalf("%d candidates (Cyborg child used: %v), want %d (%v): %s", len(reqs), used, tt.want, tt.wantChild, strings.TrimSpace(string(r.Body)))
			}
		})
	}
}
