package storetest

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

func uuidN(n int) string {
	return "00000000-0000-4000-8000-" + strings.Repeat("0", 11) + string(rune('a'+n))
}

// seedFilterFixture creates providers p0..p3 (p1 a child of p0) and,
// straight in storage as another family's code would, their inventories,
// usage, traits and aggregates; then reopens so everything is loaded from
// storage.
func seedFilterFixture(t *testing.T, s Storage) *env {
	t.Helper()
	e := openLedger(t, s)
	for i, parent := range []string{"", uuidN(0), "", ""} {
		if _, err := e.l.CreateProvider(e.ctx, store.NewProvider{UUID: uuidN(i), Name: "p" + string(rune('0'+i)), ParentUUID: parent}); err != nil {
			t.Fatal(err)
		}
	}
	ctx, id, epoch := e.ctx, mustID(t), time.Unix(0, 0)
	e.seed(func(tx store.Tx, r *store.Records) {
		p := func(n int) int64 { return providerID(t, r, uuidN(n)) }
		vcpu, disk := classID(t, r, "VCPU"), classID(t, r, "DISK_GB")
		// p0: 8 VCPU (4 used, ratio 1); p1: 4 VCPU step 2 max 2; p2: 100 DISK_GB reserved 50; p3: none.
		for _, iv := range []store.InventoryRow{
			{ProviderID: p(0), ClassID: vcpu, InventoryAmounts: store.InventoryAmounts{Total: 8, MinUnit: 1, MaxUnit: 8, StepSize: 1, AllocationRatio: 1}, CreatedAt: epoch},
			{ProviderID: p(1), ClassID: vcpu, InventoryAmounts: store.InventoryAmounts{Total: 4, MinUnit: 1, MaxUnit: 2, StepSize: 2, AllocationRatio: 1}, CreatedAt: epoch},
			{ProviderID: p(2), ClassID: disk, InventoryAmounts: store.InventoryAmounts{Total: 100, Reserved: 50, MinUnit: 1, MaxUnit: 100, StepSize: 1, AllocationRatio: 1.5}, CreatedAt: epoch},
		} {
			must(t, tx.InsertInventory(ctx, iv))
		}
		c := id(tx.InsertConsumer(ctx, store.ConsumerRow{UUID: "c", ProjectID: id(tx.InsertProject(ctx, "p")),
			UserID: id(tx.InsertUser(ctx, "u")), CreatedAt: epoch}))
		id(tx.InsertAllocation(ctx, store.AllocationRow{ProviderID: p(0), ConsumerID: c, ClassID: vcpu, Used: 4, CreatedAt: epoch}))
		for _, pt := range []struct {
			p     int
			trait string
		}{{0, "HW_CPU_X86_AVX"}, {1, "HW_CPU_X86_AVX"}, {1, "HW_CPU_X86_SSE"}, {2, "STORAGE_DISK_SSD"}} {
			must(t, tx.AddProviderTrait(ctx, p(pt.p), traitID(t, r, pt.trait)))
		}
		agg1, agg2 := id(tx.InsertAggregate(ctx, "agg1")), id(tx.InsertAggregate(ctx, "agg2"))
		must(t, tx.AddProviderAggregate(ctx, p(0), agg1))
		must(t, tx.AddProviderAggregate(ctx, p(2), agg1))
		must(t, tx.AddProviderAggregate(ctx, p(3), agg2))
	})
	return e
}

func testListProvidersFilters(t *testing.T, s Storage) {
	e := seedFilterFixture(t, s)
	for _, tc := range []struct {
		name string
		f    store.ProviderFilter
		want string // provider names, comma separated, in order
		err  error
	}{
		{"all", store.ProviderFilter{}, "p0,p1,p2,p3", nil},
		{"name", store.ProviderFilter{Name: "p2"}, "p2", nil},
		{"uuid", store.ProviderFilter{UUID: uuidN(3)}, "p3", nil},
		{"uuid and other name", store.ProviderFilter{UUID: uuidN(3), Name: "p2"}, "", nil},
		{"in tree of child", store.ProviderFilter{InTree: uuidN(1)}, "p0,p1", nil},
		{"in unknown tree", store.ProviderFilter{InTree: uuidN(9), Required: [][]string{{"NOPE"}}}, "", nil},
		{"required", store.ProviderFilter{Required: [][]string{{"HW_CPU_X86_AVX"}}}, "p0,p1", nil},
		{"required any of", store.ProviderFilter{Required: [][]string{{"HW_CPU_X86_SSE", "STORAGE_DISK_SSD"}}}, "p1,p2", nil},
		{"required and forbidden", store.ProviderFilter{Required: [][]string{{"HW_CPU_X86_AVX"}}, Forbidden: []string{"HW_CPU_X86_SSE"}}, "p0", nil},
		{"unknown required trait", store.ProviderFilter{Required: [][]string{{"HW_CPU_X86_AVX"}, {"NOPE"}}}, "", store.ErrUnknownTrait},
		{"unknown forbidden trait", store.ProviderFilter{Forbidden: []string{"NOPE"}}, "", store.ErrUnknownTrait},
		{"unmatched required hides later errors", store.ProviderFilter{Required: [][]string{{"HW_CPU_X86_SSE"}, {"STORAGE_DISK_SSD"}}, Resources: []store.ResourceAmount{{Class: "NOPE", Amount: 1}}}, "", nil},
		{"member of", store.ProviderFilter{MemberOf: [][]string{{"agg1", "unknown"}}}, "p0,p2", nil},
		{"member of all", store.ProviderFilter{MemberOf: [][]string{{"agg1"}, {"agg2"}}}, "", nil},
		{"member of unknown only", store.ProviderFilter{MemberOf: [][]string{{"unknown"}}}, "", nil},
		{"not member of", store.ProviderFilter{NotMemberOf: []string{"agg1", "unknown"}}, "p1,p3", nil},
		{"resources free capacity", store.ProviderFilter{Resources: []store.ResourceAmount{{Class: "VCPU", Amount: 4}}}, "p0", nil},
		{"resources over free capacity", store.ProviderFilter{Resources: []store.ResourceAmount{{Class: "VCPU", Amount: 5}}}, "", nil},
		{"resources step size", store.ProviderFilter{Resources: []store.ResourceAmount{{Class: "VCPU", Amount: 2}}}, "p0,p1", nil},
		{"resources off step", store.ProviderFilter{Resources: []store.ResourceAmount{{Class: "VCPU", Amount: 1}}}, "p0", nil},
		{"resources ratio and reserved", store.ProviderFilter{Resources: []store.ResourceAmount{{Class: "DISK_GB", Amount: 75}}}, "p2", nil},
		{"resources beyond ratio", store.ProviderFilter{Resources: []store.ResourceAmount{{Class: "DISK_GB", Amount: 76}}}, "", nil},
		{"resources two classes", store.ProviderFilter{Resources: []store.ResourceAmount{{Class: "VCPU", Amount: 1}, {Class: "DISK_GB", Amount: 1}}}, "", nil},
		{"unknown resource class", store.ProviderFilter{Resources: []store.ResourceAmount{{Class: "VCPU", Amount: 1000}, {Class: "NOPE", Amount: 1}}}, "", store.ErrUnknownResourceClass},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps, err := e.l.ListProviders(e.ctx, tc.f)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("err %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := providerNames(ps); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func providerNames(ps []store.Provider) string {
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Name
	}
	return strings.Join(names, ",")
}

func testDeleteProviderCleansUp(t *testing.T, s Storage) {
	e := seedFilterFixture(t, s)
	ctx := e.ctx
	before := e.records()
	gone := map[int64]bool{providerID(t, before, uuidN(1)): true, providerID(t, before, uuidN(2)): true}
	if err := e.l.DeleteProvider(ctx, uuidN(0)); !errors.Is(err, store.ErrCannotDeleteParent) {
		t.Fatalf("delete parent: %v", err)
	}
	if err := e.l.DeleteProvider(ctx, uuidN(1)); err != nil {
		t.Fatal(err)
	}
	if err := e.l.DeleteProvider(ctx, uuidN(0)); !errors.Is(err, store.ErrProviderInUse) {
		t.Fatalf("delete provider with allocations: %v", err)
	}
	if err := e.l.DeleteProvider(ctx, uuidN(2)); err != nil {
		t.Fatal(err)
	}
	after := e.records()
	for _, iv := range after.Inventories {
		if gone[iv.ProviderID] {
			t.Errorf("inventory of a deleted provider left: %+v", iv)
		}
	}
	for _, p := range after.Providers {
		if gone[p.ID] {
			t.Errorf("deleted provider left: %+v", p)
		}
	}
	if n := len(after.ProviderTraits); n != 1 {
		t.Errorf("traits left: %d", n)
	}
	// Memory agrees with storage.
	ps, err := e.l.ListProviders(ctx, store.ProviderFilter{Required: [][]string{{"HW_CPU_X86_AVX"}}})
	if err != nil || len(ps) != 1 || ps[0].Name != "p0" {
		t.Errorf("after delete: %v, %v", ps, err)
	}
	ps, err = e.l.ListProviders(ctx, store.ProviderFilter{MemberOf: [][]string{{"agg1"}}})
	if err != nil || len(ps) != 1 {
		t.Errorf("aggregate members after delete: %v, %v", ps, err)
	}
}

func testUpdateProviderMovesSubtree(t *testing.T, s Storage) {
	e := seedFilterFixture(t, s)
	ctx := e.ctx
	// p0 (with child p1) moves under p3: both now have root p3.
	parent := uuidN(3)
	if _, err := e.l.UpdateProvider(ctx, uuidN(0), store.ProviderUpdate{Name: "p0", ParentUUID: &parent}); err != nil {
		t.Fatal(err)
	}
	check := func() {
		t.Helper()
		for _, u := range []string{uuidN(0), uuidN(1)} {
			p, err := e.l.GetProvider(ctx, u)
			if err != nil || p.RootUUID != parent {
				t.Errorf("%s: root %q, %v", u, p.RootUUID, err)
			}
		}
		ps, _ := e.l.ListProviders(ctx, store.ProviderFilter{InTree: parent})
		if len(ps) != 3 {
			t.Errorf("tree of p3 has %d providers", len(ps))
		}
	}
	check()
	// Storage agrees.
	r := e.records()
	for _, p := range r.Providers {
		if p.UUID == uuidN(1) && p.RootID != providerID(t, r, parent) {
			t.Errorf("stored root of p1: %d, want the id of p3", p.RootID)
		}
	}
	// Moving p3 under p1 would make a loop; un-parenting p0 needs 1.37.
	child := uuidN(1)
	if _, err := e.l.UpdateProvider(ctx, uuidN(3), store.ProviderUpdate{Name: "p3", ParentUUID: &child, AllowReparent: true}); !errors.Is(err, store.ErrInvalid) || !strings.Contains(err.Error(), "loop") {
		t.Errorf("loop: %v", err)
	}
	none := ""
	if _, err := e.l.UpdateProvider(ctx, uuidN(0), store.ProviderUpdate{Name: "p0", ParentUUID: &none}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("un-parent without permission: %v", err)
	}
	if _, err := e.l.UpdateProvider(ctx, uuidN(0), store.ProviderUpdate{Name: "p2"}); !errors.Is(err, store.ErrDuplicate) {
		t.Errorf("duplicate name: %v", err)
	}
	check()
}
