package storetest

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// withProvider opens a ledger over s with one provider, rpUUID, named rp.
func withProvider(t *testing.T, s Storage) *env {
	t.Helper()
	e := openLedger(t, s)
	if _, err := e.l.CreateProvider(e.ctx, store.NewProvider{UUID: rpUUID, Name: "rp"}); err != nil {
		t.Fatal(err)
	}
	return e
}

// stripTimes normalizes timestamps (location, monotonic reading) so
// inventories read before and after a reopen compare by value.
func stripTimes(invs []store.Inventory) []store.Inventory {
	out := make([]store.Inventory, len(invs))
	for i, v := range invs {
		v.CreatedAt, v.UpdatedAt = v.CreatedAt.UTC(), v.UpdatedAt.UTC()
		out[i] = v
	}
	return out
}

func (e *env) inventories() (store.Provider, []store.Inventory) {
	e.t.Helper()
	p, invs, err := e.l.GetInventories(e.ctx, rpUUID)
	if err != nil {
		e.t.Fatal(err)
	}
	return p, invs
}

func testInventoryWritesSurviveReopen(t *testing.T, s Storage) {
	e := withProvider(t, s)
	ctx := e.ctx
	if _, _, err := e.l.SetInventories(ctx, rpUUID, 0, []store.Inventory{inv("VCPU", 8), inv("DISK_GB", 100)}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.l.AddInventory(ctx, rpUUID, inv("MEMORY_MB", 1024)); err != nil {
		t.Fatal(err)
	}
	upd := inv("VCPU", 16)
	upd.Reserved, upd.AllocationRatio = 2, 4.5
	p, got, err := e.l.UpdateInventory(ctx, rpUUID, 2, upd)
	if err != nil {
		t.Fatal(err)
	}
	if p.Generation != 3 || got.Total != 16 || got.AllocationRatio != 4.5 || got.UpdatedAt.IsZero() {
		t.Fatalf("update returned %+v %+v", p, got)
	}
	p1, before := e.inventories()

	e.reopen()
	p2, after := e.inventories()
	if p2.Generation != 3 || p1.Generation != 3 {
		t.Fatalf("generation %d before reopen, %d after; want 3", p1.Generation, p2.Generation)
	}
	if !reflect.DeepEqual(stripTimes(before), stripTimes(after)) {
		t.Fatalf("inventories changed across reopen:\nbefore %+v\nafter  %+v", before, after)
	}
	names := []string{after[0].ResourceClass, after[1].ResourceClass, after[2].ResourceClass}
	if !reflect.DeepEqual(names, []string{"DISK_GB", "MEMORY_MB", "VCPU"}) {
		t.Fatalf("inventories not sorted by class: %v", names)
	}

	if err := e.l.DeleteInventory(ctx, rpUUID, "MEMORY_MB"); err != nil {
		t.Fatal(err)
	}
	if err := e.l.DeleteAllInventories(ctx, rpUUID); err != nil {
		t.Fatal(err)
	}
	// Deleting nothing still moves the generation, as upstream.
	if err := e.l.DeleteAllInventories(ctx, rpUUID); err != nil {
		t.Fatal(err)
	}
	e.reopen()
	p3, left := e.inventories()
	if p3.Generation != 6 || len(left) != 0 {
		t.Fatalf("after deletes: generation %d, inventories %+v; want 6 and none", p3.Generation, left)
	}
}

func testInventoryWriteErrorsChangeNothing(t *testing.T, s Storage) {
	e := withProvider(t, s)
	ctx, l := e.ctx, e.l
	if _, _, err := l.SetInventories(ctx, rpUUID, 0, []store.Inventory{inv("VCPU", 8)}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		op   func() error
		kind error
	}{
		{"set with stale generation", func() error {
			_, _, err := l.SetInventories(ctx, rpUUID, 0, []store.Inventory{inv("DISK_GB", 1)})
			return err
		}, store.ErrConcurrentUpdate},
		{"set with unknown class", func() error {
			_, _, err := l.SetInventories(ctx, rpUUID, 1, []store.Inventory{inv("DISK_GB", 1), inv("CUSTOM_NOPE", 1)})
			return err
		}, store.ErrResourceClassNotFound},
		{"add duplicate", func() error { _, _, err := l.AddInventory(ctx, rpUUID, inv("VCPU", 1)); return err }, store.ErrDuplicate},
		{"add unknown class", func() error { _, _, err := l.AddInventory(ctx, rpUUID, inv("NOPE", 1)); return err }, store.ErrResourceClassNotFound},
		{"update stale generation", func() error {
			_, _, err := l.UpdateInventory(ctx, rpUUID, 7, inv("VCPU", 1))
			return err
		}, store.ErrConcurrentUpdate},
		{"update absent inventory", func() error {
			_, _, err := l.UpdateInventory(ctx, rpUUID, 1, inv("DISK_GB", 1))
			return err
		}, store.ErrInventoryNotFound},
		{"delete absent inventory", func() error { return l.DeleteInventory(ctx, rpUUID, "DISK_GB") }, store.ErrInventoryNotFound},
		{"delete unknown class", func() error { return l.DeleteInventory(ctx, rpUUID, "NOPE") }, store.ErrResourceClassNotFound},
		{"missing provider", func() error { return l.DeleteAllInventories(ctx, otherRPUUID) }, store.ErrNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.op(); !errors.Is(err, tc.kind) {
				t.Fatalf("got %v, want %v", err, tc.kind)
			}
			p, invs := e.inventories()
			if p.Generation != 1 || len(invs) != 1 || invs[0].Total != 8 {
				t.Fatalf("state changed: generation %d, %+v", p.Generation, invs)
			}
		})
	}
	e.reopen()
	p, invs := e.inventories()
	if p.Generation != 1 || len(invs) != 1 || invs[0].ResourceClass != "VCPU" {
		t.Fatalf("storage changed: generation %d, %+v", p.Generation, invs)
	}
}

// seedAllocation is one consumer's allocation written straight into
// storage (seedAllocations), bypassing the ledger's checks.
type seedAllocation struct {
	consumer, project, user, ctype, class string
	used                                  int64
}

// seedAllocations writes the allocations on rpUUID, creating consumers,
// projects, users and consumer types as needed, and reopens.
func (e *env) seedAllocations(allocs ...seedAllocation) {
	e.t.Helper()
	t := e.t
	e.seed(func(tx store.Tx, r *store.Records) {
		ids := map[string]int64{}
		ensure := func(key string, insert func() (int64, error)) int64 {
			if id, ok := ids[key]; ok {
				return id
			}
			ids[key] = mustID(t)(insert())
			return ids[key]
		}
		for _, a := range allocs {
			project := ensure("p/"+a.project, func() (int64, error) { return tx.InsertProject(e.ctx, a.project) })
			user := ensure("u/"+a.user, func() (int64, error) { return tx.InsertUser(e.ctx, a.user) })
			var ctype int64
			if a.ctype != "" {
				ctype = ensure("t/"+a.ctype, func() (int64, error) {
					return tx.InsertConsumerType(e.ctx, store.ConsumerTypeRow{Name: a.ctype, CreatedAt: time.Unix(0, 0)})
				})
			}
			consumer := ensure("c/"+a.consumer, func() (int64, error) {
				return tx.InsertConsumer(e.ctx, store.ConsumerRow{UUID: a.consumer, ProjectID: project, UserID: user,
					ConsumerTypeID: ctype, CreatedAt: time.Unix(0, 0)})
			})
			mustID(t)(tx.InsertAllocation(e.ctx, store.AllocationRow{ProviderID: providerID(t, r, rpUUID), ConsumerID: consumer,
				ClassID: classID(t, r, a.class), Used: a.used, CreatedAt: time.Unix(0, 0)}))
		}
	})
}

func testInventoryInUseAndUsages(t *testing.T, s Storage) {
	e := withProvider(t, s)
	ctx := e.ctx
	if _, _, err := e.l.SetInventories(ctx, rpUUID, 0, []store.Inventory{inv("VCPU", 8), inv("DISK_GB", 100), inv("MEMORY_MB", 512)}); err != nil {
		t.Fatal(err)
	}
	e.seedAllocations(
		seedAllocation{"c1", "proj", "alice", "INSTANCE", "DISK_GB", 10},
		seedAllocation{"c1", "proj", "alice", "INSTANCE", "VCPU", 2},
		seedAllocation{"c2", "proj", "bob", "", "VCPU", 1},
		seedAllocation{"c3", "other", "bob", "", "VCPU", 4},
	)
	const inUse = "Inventory for 'VCPU, DISK_GB' on resource provider '" + rpUUID + "' in use."
	_, _, err := e.l.SetInventories(ctx, rpUUID, 1, []store.Inventory{inv("MEMORY_MB", 512)})
	if !errors.Is(err, store.ErrInventoryInUse) || store.Detail(err) != inUse {
		t.Fatalf("set: got %v, want %q", err, inUse)
	}
	if err := e.l.DeleteAllInventories(ctx, rpUUID); !errors.Is(err, store.ErrInventoryInUse) || store.Detail(err) != inUse {
		t.Fatalf("delete all: got %v, want %q", err, inUse)
	}
	if err := e.l.DeleteInventory(ctx, rpUUID, "VCPU"); !errors.Is(err, store.ErrInventoryInUse) {
		t.Fatalf("delete one: got %v, want in use", err)
	}
	if err := e.l.DeleteResourceClass(ctx, "CUSTOM_X"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("delete unknown class: %v", err)
	}
	// Shrinking below usage is allowed (upstream only logs it).
	if _, _, err := e.l.UpdateInventory(ctx, rpUUID, 1, inv("VCPU", 1)); err != nil {
		t.Fatalf("shrink below usage: %v", err)
	}
	// Removing only the unused class works.
	if _, _, err := e.l.SetInventories(ctx, rpUUID, 2, []store.Inventory{inv("VCPU", 8), inv("DISK_GB", 100)}); err != nil {
		t.Fatalf("remove unused class: %v", err)
	}
	_, usages, err := e.l.ProviderUsages(ctx, rpUUID)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]int64{"VCPU": 7, "DISK_GB": 10}; !reflect.DeepEqual(usages, want) {
		t.Fatalf("provider usages %v, want %v", usages, want)
	}
	checkTotalUsages(t, e)
}

func checkTotalUsages(t *testing.T, e *env) {
	totals := []struct {
		f    store.UsageFilter
		want map[string]store.TypeUsage
	}{
		{store.UsageFilter{ProjectID: "proj", ConsumerType: "all"}, map[string]store.TypeUsage{
			"all": {ConsumerCount: 2, Usages: map[string]int64{"VCPU": 3, "DISK_GB": 10}}}},
		{store.UsageFilter{ProjectID: "proj"}, map[string]store.TypeUsage{
			"INSTANCE": {ConsumerCount: 1, Usages: map[string]int64{"VCPU": 2, "DISK_GB": 10}},
			"unknown":  {ConsumerCount: 1, Usages: map[string]int64{"VCPU": 1}}}},
		{store.UsageFilter{ProjectID: "proj", ConsumerType: "unknown"}, map[string]store.TypeUsage{
			"unknown": {ConsumerCount: 1, Usages: map[string]int64{"VCPU": 1}}}},
		{store.UsageFilter{ProjectID: "proj", ConsumerType: "INSTANCE", UserID: "alice"}, map[string]store.TypeUsage{
			"INSTANCE": {ConsumerCount: 1, Usages: map[string]int64{"VCPU": 2, "DISK_GB": 10}}}},
		{store.UsageFilter{ProjectID: "proj", ConsumerType: "INSTANCE", UserID: "bob"}, map[string]store.TypeUsage{}},
		{store.UsageFilter{ProjectID: "nobody", ConsumerType: "all"}, map[string]store.TypeUsage{}},
	}
	for _, tc := range totals {
		got, err := e.l.TotalUsages(e.ctx, tc.f)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("TotalUsages(%+v) = %+v, want %+v", tc.f, got, tc.want)
		}
	}
}

func testResourceClassesPersistAndGuard(t *testing.T, s Storage) {
	e := withProvider(t, s)
	ctx, l := e.ctx, e.l
	if _, err := l.CreateResourceClass(ctx, "CUSTOM_A"); err != nil {
		t.Fatal(err)
	}
	if _, err := l.CreateResourceClass(ctx, "CUSTOM_A"); !errors.Is(err, store.ErrDuplicate) {
		t.Fatalf("duplicate create: %v", err)
	}
	if _, created, err := l.EnsureResourceClass(ctx, "CUSTOM_B"); err != nil || !created {
		t.Fatalf("ensure new: %v %v", created, err)
	}
	if _, created, err := l.EnsureResourceClass(ctx, "CUSTOM_B"); err != nil || created {
		t.Fatalf("ensure existing: %v %v", created, err)
	}
	if _, err := l.RenameResourceClass(ctx, "VCPU", "CUSTOM_VCPU"); !errors.Is(err, store.ErrStandard) {
		t.Fatalf("rename standard: %v", err)
	}
	if _, err := l.RenameResourceClass(ctx, "CUSTOM_B", "CUSTOM_A"); !errors.Is(err, store.ErrDuplicate) {
		t.Fatalf("rename onto existing: %v", err)
	}
	rc, err := l.RenameResourceClass(ctx, "CUSTOM_B", "CUSTOM_C")
	if err != nil || rc.Name != "CUSTOM_C" || rc.UpdatedAt.IsZero() {
		t.Fatalf("rename: %+v %v", rc, err)
	}
	if err := l.DeleteResourceClass(ctx, "VCPU"); !errors.Is(err, store.ErrStandard) {
		t.Fatalf("delete standard: %v", err)
	}
	if _, _, err := l.AddInventory(ctx, rpUUID, inv("CUSTOM_C", 3)); err != nil {
		t.Fatal(err)
	}
	if err := l.DeleteResourceClass(ctx, "CUSTOM_C"); !errors.Is(err, store.ErrResourceClassInUse) {
		t.Fatalf("delete in use: %v", err)
	}
	checkClassesAfterReopen(t, e)
}

// checkClassesAfterReopen continues testResourceClassesPersistAndGuard:
// names, custom ids and list order come back from storage.
func checkClassesAfterReopen(t *testing.T, e *env) {
	e.reopen()
	ctx := e.ctx
	if _, err := e.l.GetResourceClass(ctx, "CUSTOM_B"); !errors.Is(err, store.ErrResourceClassNotFound) {
		t.Fatalf("old name after reopen: %v", err)
	}
	if got := classID(t, e.records(), "CUSTOM_A"); got != store.MinCustomResourceClassID {
		t.Fatalf("first custom id %d, want %d", got, store.MinCustomResourceClassID)
	}
	if _, err := e.l.CreateResourceClass(ctx, "CUSTOM_D"); err != nil {
		t.Fatal(err)
	}
	if got := classID(t, e.records(), "CUSTOM_D"); got != store.MinCustomResourceClassID+2 {
		t.Fatalf("id after reopen %d, want %d", got, store.MinCustomResourceClassID+2)
	}
	all, err := e.l.ListResourceClasses(ctx)
	if err != nil {
		t.Fatal(err)
	}
	n := len(all)
	tail := []string{all[n-3].Name, all[n-2].Name, all[n-1].Name}
	if all[0].Name != "VCPU" || !all[0].Standard || !reflect.DeepEqual(tail, []string{"CUSTOM_A", "CUSTOM_C", "CUSTOM_D"}) {
		t.Fatalf("list order: first %+v, last %v", all[0], tail)
	}
	if err := e.l.DeleteResourceClass(ctx, "CUSTOM_A"); err != nil {
		t.Fatal(err)
	}
	e.reopen()
	if _, err := e.l.GetResourceClass(ctx, "CUSTOM_A"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleted class after reopen: %v", err)
	}
}
