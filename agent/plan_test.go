package agent

import (
	"slices"
	"testing"

	"github.com/placement-syncd/placement-syncd/drivers"
	"github.com/placement-syncd/placement-syncd/placementclient"
)

func TestPlanTraits(t *testing.T) {
	tests := []struct {
		name                   string
		have, want, previously []string
		out                    []string
	}{
		{"adds wanted", []string{"A"}, []string{"B"}, nil, []string{"A", "B"}},
		{"keeps foreign", []string{"FOREIGN", "OLD"}, []string{"NEW"}, []string{"OLD"}, []string{"FOREIGN", "NEW"}},
		{"unknown history keeps all", []string{"OLD"}, []string{"NEW"}, nil, []string{"NEW", "OLD"}},
		{"no change", []string{"A", "B"}, []string{"A"}, []string{"A"}, []string{"A", "B"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := planTraits(tc.have, tc.want, tc.previously); !slices.Equal(got, tc.out) {
				t.Fatalf("planTraits = %v, want %v", got, tc.out)
			}
		})
	}
}

func TestPlanInventories(t *testing.T) {
	want := map[string]drivers.Inventory{"X": {Total: 2, Unavailable: drivers.ReasonCleaning}}
	have := map[string]placementclient.Inventory{"X": placementclient.Inventory{Total: 2}.WithDefaults(), "GONE": placementclient.Inventory{Total: 1}.WithDefaults()}
	t.Run("reserved equals total", func(t *testing.T) {
		p := planInventories(want, have, nil, true)
		if p.invs["X"].Reserved != 2 || len(p.invs) != 1 {
			t.Fatalf("%+v", p)
		}
	})
	t.Run("old server deletes", func(t *testing.T) {
		p := planInventories(want, have, nil, false)
		if len(p.invs) != 0 || !slices.Equal(p.fallbackDeleted, []string{"X"}) {
			t.Fatalf("%+v", p)
		}
	})
	t.Run("in use is kept", func(t *testing.T) {
		p := planInventories(want, have, map[string]int{"GONE": 1, "X": 1}, false)
		if len(p.invs) != 2 || !slices.Equal(p.keptInUse, []string{"GONE", "X"}) {
			t.Fatalf("%+v", p)
		}
	})
}

// TestPlanDefers: a provider carrying one of the desired provider's
// DeferTo traits, which the driver does not want itself, is planned
// without writes; one that does not, or does not exist yet, is written.
func TestPlanDefers(t *testing.T) {
	p := drivers.Provider{UUID: "u", Name: "u", Traits: []string{"COMPUTE_NODE", "OWNER_NOVA"}, DeferTo: []string{"COMPUTE_IMAGE_TYPE_RAW"},
		Inventories: map[string]drivers.Inventory{"CUSTOM_GOLD": {Total: 1, Unavailable: drivers.ReasonCleaning}}}
	novas := observed{exists: true, have: actual{invs: map[string]placementclient.Inventory{}, traits: []string{"COMPUTE_IMAGE_TYPE_RAW", "COMPUTE_NODE"}}}
	plain := observed{exists: true, have: actual{invs: map[string]placementclient.Inventory{}, traits: []string{"COMPUTE_NODE"}}}
	ownRaw := p
	ownRaw.Traits = append([]string{"COMPUTE_IMAGE_TYPE_RAW"}, p.Traits...)
	old := p
	old.DeferTo = nil
	tests := []struct {
		name     string
		p        drivers.Provider
		obs      observed
		deferred string
	}{
		{"reported by nova", p, novas, "COMPUTE_IMAGE_TYPE_RAW"},
		{"not reported", p, plain, ""},
		{"not created yet", p, observed{}, ""},
		{"the node's own trait", ownRaw, novas, ""},
		{"no DeferTo", old, novas, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pp := planProvider(tc.p, "", tc.obs, []string{"OWNER_NOVA"}, true)
			if pp.deferredTo != tc.deferred || pp.writes() == (tc.deferred != "") {
				t.Fatalf("deferredTo %q, writes %v; want %q, %v", pp.deferredTo, pp.writes(), tc.deferred, tc.deferred == "")
			}
		})
	}
}
