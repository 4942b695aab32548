package agent_test

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/placement-syncd/placement-syncd/drivers"
	"github.com/placement-syncd/placement-syncd/testkit/placementtest"
)

// keepDriver is a Retiring driver whose tree the test sets.
type keepDriver struct {
	mu   sync.Mutex
	tree drivers.Tree
}

func (d *keepDriver) Name() string     { return "keep" }
func (d *keepDriver) Close() error     { return nil }
func (d *keepDriver) RetiresVanished() {}
func (d *keepDriver) set(tree drivers.Tree) {
	d.mu.Lock()
	d.tree = tree
	d.mu.Unlock()
}

func (d *keepDriver) Observe(context.Context) (*drivers.Tree, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return &drivers.Tree{Providers: append([]drivers.Provider(nil), d.tree.Providers...), Keep: append([]string(nil), d.tree.Keep...)}, nil
}

func goldProvider(uuid string) drivers.Provider {
	return drivers.Provider{UUID: uuid, Name: "node-" + uuid, Owner: drivers.OwnerNova, Traits: []string{"COMPUTE_NODE"},
		Inventories: map[string]drivers.Inventory{goldRC: {Total: 1, MinUnit: 1, MaxUnit: 1, StepSize: 1, AllocationRatio: 1}}}
}

// reserveGold reserves a node's gold inventory in full, as an operator
// would, and returns the provider's new generation.
func reserveGold(t *testing.T, srv *placementtest.Server, uuid string) int {
	t.Helper()
	gen, _ := srv.Inventories(t, uuid)
	srv.MustDo(t, http.StatusOK, http.MethodPut, "/resource_providers/"+uuid+"/inventories", "1.26", map[string]any{
		"resource_provider_generation": gen,
		"inventories":                  map[string]any{goldRC: map[string]int{"total": 1, "reserved": 1, "max_unit": 1}},
	})
	g, _ := srv.Inventories(t, uuid)
	return g
}

// TestKeep: a provider the driver keeps (observed, not described) is
// neither retired nor written, even when every other provider vanished
// past the limit; once it is no longer kept it vanishes and is retired.
func TestKeep(t *testing.T) {
	for _, kind := range placementtest.Kinds() {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			srv := placementtest.Start(t, kind)
			a, b, c := nodeUUID(30, 1), nodeUUID(30, 2), nodeUUID(30, 3)
			d := &keepDriver{}
			d.set(drivers.Tree{Providers: []drivers.Provider{goldProvider(a), goldProvider(b), goldProvider(c)}})
			e := newEnv(t, srv.URL, []drivers.Driver{d}, nil)
			syncOK(t, e, "first pass")

			// b is kept: an operator's reservation on it stays, and it is
			// not retired; c vanishes and is retired (1 of 3 is allowed).
			g := reserveGold(t, srv, b)
			d.set(drivers.Tree{Providers: []drivers.Provider{goldProvider(a)}, Keep: []string{b}})
			if r := syncOK(t, e, "b kept, c gone"); r.Retired != 1 || r.RetireRefused != "" || r.Writes != 1 {
				t.Fatalf("b kept, c gone: retired %d refused %q writes %d; want 1 \"\" 1", r.Retired, r.RetireRefused, r.Writes)
			}
			if gen, _ := srv.Inventories(t, b); gen != g || !providerExists(t, srv, b) || providerExists(t, srv, c) {
				t.Fatalf("b: generation %d -> %d, exists %v; c exists %v", g, gen, providerExists(t, srv, b), providerExists(t, srv, c))
			}
			checkNode(t, srv, b, 1)
			// Only kept providers left: not an empty answer, nothing vanished.
			d.set(drivers.Tree{Keep: []string{a, b}})
			if r := syncOK(t, e, "all kept"); r.RetireRefused != "" || r.Retired != 0 || r.Writes != 0 {
				t.Fatalf("all kept: refused %q retired %d writes %d", r.RetireRefused, r.Retired, r.Writes)
			}
			// b no longer kept: it vanished, and is retired.
			d.set(drivers.Tree{Providers: []drivers.Provider{goldProvider(a)}})
			if r := syncOK(t, e, "b gone"); r.Retired != 1 || providerExists(t, srv, b) {
				t.Fatalf("b gone: retired %d, exists %v", r.Retired, providerExists(t, srv, b))
			}
			checkNode(t, srv, a, 0)
		})
	}
}
