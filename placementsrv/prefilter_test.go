package placementsrv

import (
	"fmt"
	"sync/atomic"
	"testing"
)

// gateSwitch is an OwnerNovaGate the test flips.
type gateSwitch struct{ open atomic.Bool }

func (g *gateSwitch) OwnerNovaGateOpen() bool { return g.open.Load() }

func TestOwnerNovaPrefilter(t *testing.T) {
	gate := &gateSwitch{}
	tests := []struct {
		name  string
		mode  string
		open  bool
		user  string
		query string
		want  int
	}{
		{name: "off", mode: PrefilterOff, user: "nova", want: 3},
		{name: "on: scheduler gets Nova's only", mode: PrefilterOn, user: "nova", want: 1},
		{name: "on: other users unfiltered", mode: PrefilterOn, user: "admin", want: 3},
		// A group asking for OWNER_CYBORG keeps it, but the root must
		// still be Nova's (upstream's root_required): the Cyborg root is out.
		{name: "on: group naming OWNER_CYBORG, root still Nova's", mode: PrefilterOn, user: "nova", query: "&required=OWNER_CYBORG", want: 0},
		// The root filter is the request's own; its group still may not
		// be satisfied by another owner's provider.
		{name: "on: request forbidding OWNER_NOVA at the root", mode: PrefilterOn, user: "nova", query: "&root_required=!OWNER_NOVA", want: 1},
		{name: "auto, gate closed: unfiltered", mode: PrefilterAuto, user: "nova", want: 3},
		{name: "auto, gate open: filtered", mode: PrefilterAuto, open: true, user: "nova", want: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := startServerWith(t, func(o *Options) {
				o.OwnerNovaPrefilter, o.OwnerNovaGate, o.SchedulerUsers = tt.mode, gate, []string{"nova"}
			})
			for i, owner := range []string{"OWNER_NOVA", "OWNER_CYBORG", ""} {
				u := fmt.Sprintf("00000000-0000-0000-0000-00000000000%d", i+1)
				ts.must(t, 200, call{Method: "POST", Path: "/resource_providers", Version: "1.39", Body: fmt.Sprintf(`{"name":"rp%d","uuid":%q}`, i, u)})
				ts.must(t, 200, call{Method: "PUT", Path: "/resource_providers/" + u + "/inventories", Version: "1.39",
					Body: `{"resource_provider_generation":0,"inventories":{"VCPU":{"total":8}}}`})
				if owner != "" {
					ts.must(t, 200, call{Method: "PUT", Path: "/resource_providers/" + u + "/traits", Version: "1.39",
						Body: fmt.Sprintf(`{"resource_provider_generation":1,"traits":[%q]}`, owner)})
				}
			}
			gate.open.Store(tt.open)
			r := ts.must(t, 200, call{Method: "GET", Path: "/allocation_candidates?resources=VCPU:1" + tt.query, Version: "1.39",
				Headers: map[string]string{"X-Auth-Token": tt.user, "X-Roles": "admin"}})
			got := len(r.JSON(t)["allocation_requests"].([]any))
			if got != tt.want {
				t.Fatalf("%d candidates, want %d: %s", got, tt.want, r.Body)
			}
		})
	}
	if _, err := New(Options{Store: startTestServer(t).Store, OwnerNovaPrefilter: PrefilterAuto}); err == nil {
		t.Fatal("auto without a gate accepted")
	}
}
