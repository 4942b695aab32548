package placementclient_test

import (
	"errors"
	"net/http"
	"slices"
	"testing"

	"github.com/placement-syncd/placement-syncd/microversion"
	"github.com/placement-syncd/placement-syncd/placementclient"
	"github.com/placement-syncd/placement-syncd/testkit/placementtest"
)

func newClient(t *testing.T, srv *placementtest.Server) *placementclient.Client {
	t.Helper()
	c, err := placementclient.New(t.Context(), placementclient.Options{Endpoint: srv.URL, Token: srv.Token})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestClient runs the same checks against our server and the reference
// OpenStack Placement 8.0.0.
func TestClient(t *testing.T) {
	for _, kind := range placementtest.Kinds() {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			srv := placementtest.Start(t, kind)
			testClient(t, srv)
		})
	}
}

const (
	rootUUID  = "4e8e5957-649f-477b-9e5b-f1f75b21c03c"
	childUUID = "5e8e5957-649f-477b-9e5b-f1f75b21c03c"
	aggUUID   = "6e8e5957-649f-477b-9e5b-f1f75b21c03c"
	consumer  = "7e8e5957-649f-477b-9e5b-f1f75b21c03c"
)

func testClient(t *testing.T, srv *placementtest.Server) {
	ctx := t.Context()
	c := newClient(t, srv)

	min, max, err := c.Versions(ctx)
	if err != nil || min != (microversion.Version{Major: 1, Minor: 0}) || max != (microversion.Version{Major: 1, Minor: 39}) {
		t.Fatalf("Versions = %s, %s, %v; want 1.0, 1.39", min, max, err)
	}

	root, err := c.CreateProvider(ctx, placementclient.NewProvider{UUID: rootUUID, Name: "host-a"})
	if err != nil || root.UUID != rootUUID || root.Generation != 0 || root.RootUUID != rootUUID {
		t.Fatalf("create root = %+v, %v", root, err)
	}
	child, err := c.CreateProvider(ctx, placementclient.NewProvider{UUID: childUUID, Name: "host-a_0000:5e:00.0", ParentUUID: rootUUID})
	if err != nil || child.ParentUUID != rootUUID || child.RootUUID != rootUUID {
		t.Fatalf("create child = %+v, %v", child, err)
	}
	t.Run("duplicate name", func(t *testing.T) {
		_, err := c.CreateProvider(ctx, placementclient.NewProvider{Name: "host-a"})
		if !errors.Is(err, placementclient.ErrDuplicateName) {
			t.Fatalf("err = %v, want ErrDuplicateName", err)
		}
	})
	t.Run("get and list", func(t *testing.T) {
		if _, err := c.GetProvider(ctx, "00000000-0000-0000-0000-00000000dead"); !placementclient.IsNotFound(err) {
			t.Fatalf("get missing: %v", err)
		}
		tree, err := c.ListProviders(ctx, placementclient.ListFilter{InTree: childUUID})
		if err != nil || len(tree) != 2 {
			t.Fatalf("in_tree = %+v, %v", tree, err)
		}
		byName, err := c.ListProviders(ctx, placementclient.ListFilter{Name: "host-a"})
		if err != nil || len(byName) != 1 || byName[0].UUID != rootUUID {
			t.Fatalf("by name = %+v, %v", byName, err)
		}
		byUUID, err := c.ListProviders(ctx, placementclient.ListFilter{UUID: childUUID})
		if err != nil || len(byUUID) != 1 || byUUID[0].Name != "host-a_0000:5e:00.0" {
			t.Fatalf("by uuid = %+v, %v", byUUID, err)
		}
	})

	var gen int
	t.Run("inventories", func(t *testing.T) {
		if err := c.EnsureResourceClass(ctx, "CUSTOM_BAREMETAL_GOLD"); err != nil {
			t.Fatal(err)
		}
		if err := c.EnsureResourceClass(ctx, "CUSTOM_BAREMETAL_GOLD"); err != nil {
			t.Fatalf("second ensure: %v", err)
		}
		want := map[string]placementclient.Inventory{
			"VCPU":                  {Total: 8, AllocationRatio: 1.2},
			"CUSTOM_BAREMETAL_GOLD": {Total: 1, MinUnit: 1, MaxUnit: 1, StepSize: 1, AllocationRatio: 1},
		}
		g, err := c.PutInventories(ctx, rootUUID, 0, want)
		if err != nil || g != 1 {
			t.Fatalf("put = %d, %v", g, err)
		}
		got, err := c.GetInventories(ctx, rootUUID)
		if err != nil || got.Generation != 1 {
			t.Fatalf("get = %+v, %v", got, err)
		}
		for rc, inv := range want {
			if !got.Inventories[rc].Equal(inv.WithDefaults()) || got.Inventories[rc] != inv.WithDefaults() {
				t.Errorf("%s = %+v, want %+v", rc, got.Inventories[rc], inv.WithDefaults())
			}
		}
		if _, err := c.PutInventories(ctx, rootUUID, 0, want); !errors.Is(err, placementclient.ErrConcurrentUpdate) {
			t.Fatalf("stale generation: %v", err)
		}
		gen = g
	})
	t.Run("in use", func(t *testing.T) {
		srv.Allocate(t, consumer, rootUUID, map[string]int{"CUSTOM_BAREMETAL_GOLD": 1})
		u, err := c.GetUsages(ctx, rootUUID)
		if err != nil || u.Usages["CUSTOM_BAREMETAL_GOLD"] != 1 {
			t.Fatalf("usages = %+v, %v", u, err)
		}
		a, err := placementclient.GetProviderAllocations(c, ctx, rootUUID)
		if err != nil || a.Allocations[consumer]["CUSTOM_BAREMETAL_GOLD"] != 1 {
			t.Fatalf("allocations = %+v, %v", a, err)
		}
		gen = u.Generation
		// reserved == total while allocated: over capacity is allowed.
		reserved := map[string]placementclient.Inventory{
			"VCPU":                  {Total: 8, AllocationRatio: 1.2},
			"CUSTOM_BAREMETAL_GOLD": {Total: 1, Reserved: 1, MaxUnit: 1},
		}
		if gen, err = c.PutInventories(ctx, rootUUID, gen, reserved); err != nil {
			t.Fatalf("reserve while allocated: %v", err)
		}
		_, err = c.PutInventories(ctx, rootUUID, gen, map[string]placementclient.Inventory{"VCPU": {Total: 8}})
		if !errors.Is(err, placementclient.ErrInventoryInUse) {
			t.Fatalf("removing in-use class: %v", err)
		}
		var pe *placementclient.Error
		if !errors.As(err, &pe) || pe.Status != http.StatusConflict || pe.Code != "placement.inventory.inuse" {
			t.Fatalf("error = %#v", err)
		}
		srv.Deallocate(t, consumer)
	})
	t.Run("traits", func(t *testing.T) {
		if err := c.EnsureTrait(ctx, "CUSTOM_RAID5"); err != nil {
			t.Fatal(err)
		}
		tr, err := c.GetTraits(ctx, rootUUID)
		if err != nil {
			t.Fatal(err)
		}
		g, err := c.PutTraits(ctx, rootUUID, tr.Generation, []string{"CUSTOM_RAID5", "COMPUTE_NODE", "OWNER_NOVA"})
		if err != nil || g != tr.Generation+1 {
			t.Fatalf("put traits = %d, %v", g, err)
		}
		got, err := c.GetTraits(ctx, rootUUID)
		if err != nil || !slices.Equal(got.Traits, []string{"COMPUTE_NODE", "CUSTOM_RAID5", "OWNER_NOVA"}) {
			t.Fatalf("traits = %+v, %v", got, err)
		}
		if _, err := c.PutTraits(ctx, rootUUID, tr.Generation, nil); !errors.Is(err, placementclient.ErrConcurrentUpdate) {
			t.Fatalf("stale: %v", err)
		}
	})
	t.Run("aggregates", func(t *testing.T) {
		a, err := c.GetAggregates(ctx, rootUUID)
		if err != nil || len(a.Aggregates) != 0 {
			t.Fatalf("get = %+v, %v", a, err)
		}
		g, err := c.PutAggregates(ctx, rootUUID, a.Generation, []string{aggUUID})
		if err != nil || g != a.Generation+1 {
			t.Fatalf("put = %d, %v", g, err)
		}
		if _, err := c.PutAggregates(ctx, rootUUID, a.Generation, nil); !errors.Is(err, placementclient.ErrConcurrentUpdate) {
			t.Fatalf("stale: %v", err)
		}
	})
	t.Run("delete inventory", func(t *testing.T) {
		if err := c.DeleteInventory(ctx, rootUUID, "VCPU"); err != nil {
			t.Fatal(err)
		}
		if err := c.DeleteInventories(ctx, rootUUID); err != nil {
			t.Fatal(err)
		}
		got, err := c.GetInventories(ctx, rootUUID)
		if err != nil || len(got.Inventories) != 0 {
			t.Fatalf("after delete = %+v, %v", got, err)
		}
	})
	t.Run("reserved equals total needs 1.26", func(t *testing.T) {
		g, _ := srv.Inventories(t, childUUID)
		body := map[string]any{
			"resource_provider_generation": g,
			"inventories":                  map[string]any{"FPGA": map[string]any{"total": 2, "reserved": 2}},
		}
		status, b := srv.Do(t, http.MethodPut, "/resource_providers/"+childUUID+"/inventories", "1.25", body)
		if status != http.StatusBadRequest {
			t.Fatalf("1.25: status %d, want 400: %s", status, b)
		}
		srv.MustDo(t, http.StatusOK, http.MethodPut, "/resource_providers/"+childUUID+"/inventories", "1.26", body)
	})
	t.Run("delete provider", func(t *testing.T) {
		if err := c.DeleteProvider(ctx, rootUUID); !errors.Is(err, placementclient.ErrCannotDeleteParent) {
			t.Fatalf("delete parent: %v", err)
		}
		if err := c.DeleteProvider(ctx, childUUID); err != nil {
			t.Fatal(err)
		}
	})
}

// TestClient_OldServer checks the fallbacks against our server capped at
// older microversions: Create without a body (< 1.20), bare aggregate
// lists (< 1.19) and the refusal to send reserved == total (< 1.26).
func TestClient_OldServer(t *testing.T) {
	srv := placementtest.StartOurs(t, placementtest.Options{MaxMicroversion: "1.18"})
	ctx := t.Context()
	c := newClient(t, srv)
	if _, max, err := c.Versions(ctx); err != nil || max != (microversion.Version{Major: 1, Minor: 18}) {
		t.Fatalf("max = %s, %v", max, err)
	}
	p, err := c.CreateProvider(ctx, placementclient.NewProvider{UUID: rootUUID, Name: "old"})
	if err != nil || p.UUID != rootUUID {
		t.Fatalf("create = %+v, %v", p, err)
	}
	child, err := c.CreateProvider(ctx, placementclient.NewProvider{UUID: childUUID, Name: "old-child", ParentUUID: rootUUID})
	if err != nil || child.ParentUUID != rootUUID {
		t.Fatalf("create child = %+v, %v", child, err)
	}
	if _, err := c.PutAggregates(ctx, rootUUID, 0, []string{aggUUID}); err != nil {
		t.Fatalf("aggregates: %v", err)
	}
	a, err := c.GetAggregates(ctx, rootUUID)
	if err != nil || a.Generation != -1 || !slices.Equal(a.Aggregates, []string{aggUUID}) {
		t.Fatalf("aggregates = %+v, %v", a, err)
	}
	_, err = c.PutInventories(ctx, rootUUID, p.Generation, map[string]placementclient.Inventory{"VCPU": {Total: 4, Reserved: 4}})
	if !errors.Is(err, placementclient.ErrUnsupported) {
		t.Fatalf("reserved == total at 1.18: %v", err)
	}
	if _, err := c.PutInventories(ctx, rootUUID, p.Generation, map[string]placementclient.Inventory{"VCPU": {Total: 4, Reserved: 1}}); err != nil {
		t.Fatal(err)
	}
}

// TestClient_Unreachable: a refused connection is ErrUnavailable, which is
// retryable.
func TestClient_Unreachable(t *testing.T) {
	srv := placementtest.StartOurs(t, placementtest.Options{})
	proxy := placementtest.NewProxy(t, srv.URL)
	c, err := placementclient.New(t.Context(), placementclient.Options{Endpoint: proxy.URL, Token: "admin"})
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []placementtest.Mode{placementtest.Unavailable, placementtest.Drop} {
		proxy.SetMode(mode)
		_, err := c.GetProvider(t.Context(), rootUUID)
		if !errors.Is(err, placementclient.ErrUnavailable) || !placementclient.Retryable(err) {
			t.Fatalf("mode %d: err = %v, want retryable ErrUnavailable", mode, err)
		}
	}
	proxy.SetMode(placementtest.Pass)
	if _, err := c.GetProvider(t.Context(), rootUUID); !placementclient.IsNotFound(err) {
		t.Fatalf("after recovery: %v", err)
	}
}
