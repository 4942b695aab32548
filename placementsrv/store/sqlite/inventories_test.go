package sqlite

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

const (
	rpUUID      = "7260669a-e3d4-4867-aaa7-683e2ab6958c"
	otherRPUUID = "2e1dda56-8b18-4fb9-8c5c-3125891b7143"
)

// openAt opens (or reopens) the store file at path.
func openAt(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(context.Background(), path, Options{Migrate: true})
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	return s
}

// newTestStore opens a fresh store with one provider and returns it with
// its file path; the store is closed at the end of the test.
func newTestStore(t *testing.T) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "placement.db")
	s := openAt(t, path)
	t.Cleanup(func() { s.Close() })
	if _, err := s.CreateProvider(context.Background(), store.NewProvider{UUID: rpUUID, Name: "rp"}); err != nil {
		t.Fatal(err)
	}
	return s, path
}

// reopen closes s and opens its file again, so that everything after
// comes from disk.
func reopen(t *testing.T, s *Store, path string) *Store {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := openAt(t, path)
	t.Cleanup(func() { s2.Close() })
	return s2
}

func inv(class string, total int64) store.Inventory {
	return store.Inventory{ResourceClass: class, Total: total, MinUnit: 1, MaxUnit: total, StepSize: 1, AllocationRatio: 1.0}
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

func mustInventories(t *testing.T, s *Store) (store.Provider, []store.Inventory) {
	t.Helper()
	p, invs, err := s.GetInventories(context.Background(), rpUUID)
	if err != nil {
		t.Fatal(err)
	}
	return p, invs
}

func TestInventoryWritesSurviveReopen(t *testing.T) {
	ctx := context.Background()
	s, path := newTestStore(t)
	if _, _, err := s.SetInventories(ctx, rpUUID, 0, []store.Inventory{inv("VCPU", 8), inv("DISK_GB", 100)}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.AddInventory(ctx, rpUUID, inv("MEMORY_MB", 1024)); err != nil {
		t.Fatal(err)
	}
	upd := inv("VCPU", 16)
	upd.Reserved, upd.AllocationRatio = 2, 4.5
	p, got, err := s.UpdateInventory(ctx, rpUUID, 2, upd)
	if err != nil {
		t.Fatal(err)
	}
	if p.Generation != 3 || got.Total != 16 || got.AllocationRatio != 4.5 || got.UpdatedAt.IsZero() {
		t.Fatalf("update returned %+v %+v", p, got)
	}
	p1, before := mustInventories(t, s)

	s = reopen(t, s, path)
	p2, after := mustInventories(t, s)
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

	if err := s.DeleteInventory(ctx, rpUUID, "MEMORY_MB"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteAllInventories(ctx, rpUUID); err != nil {
		t.Fatal(err)
	}
	// Deleting nothing still moves the generation, as upstream.
	if err := s.DeleteAllInventories(ctx, rpUUID); err != nil {
		t.Fatal(err)
	}
	s = reopen(t, s, path)
	p3, left := mustInventories(t, s)
	if p3.Generation != 6 || len(left) != 0 {
		t.Fatalf("after deletes: generation %d, inventories %+v; want 6 and none", p3.Generation, left)
	}
}

func TestInventoryWriteErrorsChangeNothing(t *testing.T) {
	ctx := context.Background()
	s, path := newTestStore(t)
	if _, _, err := s.SetInventories(ctx, rpUUID, 0, []store.Inventory{inv("VCPU", 8)}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		op   func() error
		kind error
	}{
		{"set with stale generation", func() error {
			_, _, err := s.SetInventories(ctx, rpUUID, 0, []store.Inventory{inv("DISK_GB", 1)})
			return err
		}, store.ErrConcurrentUpdate},
		{"set with unknown class", func() error {
			_, _, err := s.SetInventories(ctx, rpUUID, 1, []store.Inventory{inv("DISK_GB", 1), inv("CUSTOM_NOPE", 1)})
			return err
		}, store.ErrResourceClassNotFound},
		{"add duplicate", func() error {
			_, _, err := s.AddInventory(ctx, rpUUID, inv("VCPU", 1))
			return err
		}, store.ErrDuplicate},
		{"add unknown class", func() error {
			_, _, err := s.AddInventory(ctx, rpUUID, inv("NOPE", 1))
			return err
		}, store.ErrResourceClassNotFound},
		{"update stale generation", func() error {
			_, _, err := s.UpdateInventory(ctx, rpUUID, 7, inv("VCPU", 1))
			return err
		}, store.ErrConcurrentUpdate},
		{"update absent inventory", func() error {
			_, _, err := s.UpdateInventory(ctx, rpUUID, 1, inv("DISK_GB", 1))
			return err
		}, store.ErrInventoryNotFound},
		{"delete absent inventory", func() error { return s.DeleteInventory(ctx, rpUUID, "DISK_GB") }, store.ErrInventoryNotFound},
		{"delete unknown class", func() error { return s.DeleteInventory(ctx, rpUUID, "NOPE") }, store.ErrResourceClassNotFound},
		{"missing provider", func() error { return s.DeleteAllInventories(ctx, otherRPUUID) }, store.ErrNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.op(); !errors.Is(err, tc.kind) {
				t.Fatalf("got %v, want %v", err, tc.kind)
			}
			p, invs := mustInventories(t, s)
			if p.Generation != 1 || len(invs) != 1 || invs[0].Total != 8 {
				t.Fatalf("state changed: generation %d, %+v", p.Generation, invs)
			}
		})
	}
	s = reopen(t, s, path)
	p, invs := mustInventories(t, s)
	if p.Generation != 1 || len(invs) != 1 || invs[0].ResourceClass != "VCPU" {
		t.Fatalf("database changed: generation %d, %+v", p.Generation, invs)
	}
}

// seedAllocation writes a consumer and its allocation straight into the
// database; the caller reopens the store to load it.
func seedAllocation(t *testing.T, s *Store, consumer, project, user, ctype string, class string, used int64) {
	t.Helper()
	ctx := context.Background()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := s.db.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`INSERT INTO projects (external_id) VALUES (?) ON CONFLICT DO NOTHING`, project)
	exec(`INSERT INTO users (external_id) VALUES (?) ON CONFLICT DO NOTHING`, user)
	var ctypeID any
	if ctype != "" {
		exec(`INSERT INTO consumer_types (name, created_at) VALUES (?, 0) ON CONFLICT DO NOTHING`, ctype)
		ctypeID = ctype
	}
	exec(`INSERT INTO consumers (uuid, project_id, user_id, consumer_type_id, created_at)
		VALUES (?, (SELECT id FROM projects WHERE external_id = ?), (SELECT id FROM users WHERE external_id = ?),
		(SELECT id FROM consumer_types WHERE name = ?), 0) ON CONFLICT DO NOTHING`, consumer, project, user, ctypeID)
	exec(`INSERT INTO allocations (resource_provider_id, consumer_id, resource_class_id, used, created_at)
		VALUES ((SELECT id FROM resource_providers WHERE uuid = ?), (SELECT id FROM consumers WHERE uuid = ?),
		(SELECT id FROM resource_classes WHERE name = ?), ?, 0)`, rpUUID, consumer, class, used)
}

func TestInventoryInUseAndUsages(t *testing.T) {
	ctx := context.Background()
	s, path := newTestStore(t)
	if _, _, err := s.SetInventories(ctx, rpUUID, 0, []store.Inventory{inv("VCPU", 8), inv("DISK_GB", 100), inv("MEMORY_MB", 512)}); err != nil {
		t.Fatal(err)
	}
	seedAllocation(t, s, "c1", "proj", "alice", "INSTANCE", "DISK_GB", 10)
	seedAllocation(t, s, "c1", "proj", "alice", "INSTANCE", "VCPU", 2)
	seedAllocation(t, s, "c2", "proj", "bob", "", "VCPU", 1)
	seedAllocation(t, s, "c3", "other", "bob", "", "VCPU", 4)
	s = reopen(t, s, path)

	const inUse = "Inventory for 'VCPU, DISK_GB' on resource provider '" + rpUUID + "' in use."
	_, _, err := s.SetInventories(ctx, rpUUID, 1, []store.Inventory{inv("MEMORY_MB", 512)})
	if !errors.Is(err, store.ErrInventoryInUse) || store.Detail(err) != inUse {
		t.Fatalf("set: got %v, want %q", err, inUse)
	}
	if err := s.DeleteAllInventories(ctx, rpUUID); !errors.Is(err, store.ErrInventoryInUse) || store.Detail(err) != inUse {
		t.Fatalf("delete all: got %v, want %q", err, inUse)
	}
	if err := s.DeleteInventory(ctx, rpUUID, "VCPU"); !errors.Is(err, store.ErrInventoryInUse) {
		t.Fatalf("delete one: got %v, want in use", err)
	}
	if err := s.DeleteResourceClass(ctx, "CUSTOM_X"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("delete unknown class: %v", err)
	}
	// Shrinking below usage is allowed (upstream only logs it).
	if _, _, err := s.UpdateInventory(ctx, rpUUID, 1, inv("VCPU", 1)); err != nil {
		t.Fatalf("shrink below usage: %v", err)
	}
	// Removing only the unused class works.
	if _, _, err := s.SetInventories(ctx, rpUUID, 2, []store.Inventory{inv("VCPU", 8), inv("DISK_GB", 100)}); err != nil {
		t.Fatalf("remove unused class: %v", err)
	}

	_, usages, err := s.ProviderUsages(ctx, rpUUID)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]int64{"VCPU": 7, "DISK_GB": 10}; !reflect.DeepEqual(usages, want) {
		t.Fatalf("provider usages %v, want %v", usages, want)
	}

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
		got, err := s.TotalUsages(ctx, tc.f)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("TotalUsages(%+v) = %+v, want %+v", tc.f, got, tc.want)
		}
	}
}

func TestResourceClassesPersistAndGuard(t *testing.T) {
	ctx := context.Background()
	s, path := newTestStore(t)
	if _, err := s.CreateResourceClass(ctx, "CUSTOM_A"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateResourceClass(ctx, "CUSTOM_A"); !errors.Is(err, store.ErrDuplicate) {
		t.Fatalf("duplicate create: %v", err)
	}
	if _, created, err := s.EnsureResourceClass(ctx, "CUSTOM_B"); err != nil || !created {
		t.Fatalf("ensure new: %v %v", created, err)
	}
	if _, created, err := s.EnsureResourceClass(ctx, "CUSTOM_B"); err != nil || created {
		t.Fatalf("ensure existing: %v %v", created, err)
	}
	if _, err := s.RenameResourceClass(ctx, "VCPU", "CUSTOM_VCPU"); !errors.Is(err, store.ErrStandard) {
		t.Fatalf("rename standard: %v", err)
	}
	if _, err := s.RenameResourceClass(ctx, "CUSTOM_B", "CUSTOM_A"); !errors.Is(err, store.ErrDuplicate) {
		t.Fatalf("rename onto existing: %v", err)
	}
	rc, err := s.RenameResourceClass(ctx, "CUSTOM_B", "CUSTOM_C")
	if err != nil || rc.Name != "CUSTOM_C" || rc.UpdatedAt.IsZero() {
		t.Fatalf("rename: %+v %v", rc, err)
	}
	if err := s.DeleteResourceClass(ctx, "VCPU"); !errors.Is(err, store.ErrStandard) {
		t.Fatalf("delete standard: %v", err)
	}
	if _, _, err := s.AddInventory(ctx, rpUUID, inv("CUSTOM_C", 3)); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteResourceClass(ctx, "CUSTOM_C"); !errors.Is(err, store.ErrResourceClassInUse) {
		t.Fatalf("delete in use: %v", err)
	}

	s = reopen(t, s, path)
	if _, err := s.GetResourceClass(ctx, "CUSTOM_B"); !errors.Is(err, store.ErrResourceClassNotFound) {
		t.Fatalf("old name after reopen: %v", err)
	}
	if got := s.st.classes["CUSTOM_A"].id; got != store.MinCustomResourceClassID {
		t.Fatalf("first custom id %d, want %d", got, store.MinCustomResourceClassID)
	}
	if _, err := s.CreateResourceClass(ctx, "CUSTOM_D"); err != nil {
		t.Fatal(err)
	}
	if got := s.st.classes["CUSTOM_D"].id; got != store.MinCustomResourceClassID+2 {
		t.Fatalf("id after reopen %d, want %d", got, store.MinCustomResourceClassID+2)
	}
	all, err := s.ListResourceClasses(ctx)
	if err != nil {
		t.Fatal(err)
	}
	n := len(all)
	tail := []string{all[n-3].Name, all[n-2].Name, all[n-1].Name}
	if all[0].Name != "VCPU" || !all[0].Standard || !reflect.DeepEqual(tail, []string{"CUSTOM_A", "CUSTOM_C", "CUSTOM_D"}) {
		t.Fatalf("list order: first %+v, last %v", all[0], tail)
	}
	if err := s.DeleteResourceClass(ctx, "CUSTOM_A"); err != nil {
		t.Fatal(err)
	}
	s = reopen(t, s, path)
	if _, err := s.GetResourceClass(ctx, "CUSTOM_A"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleted class after reopen: %v", err)
	}
}
