// Package storetest is the contract every store.Backend is held to. Run
// checks the record level (round trips, rollback, unique keys, references,
// compare-and-swap, cascades, id order) and then the whole store.Store
// behaviour of package ledger over the backend (Placement's rules,
// durability across reopen, failed writes leaving nothing behind,
// concurrent writers). A backend's tests call Run with fresh storage.
package storetest

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/ledger"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// Storage opens one persistent storage: every call returns a new Backend
// over the same records, as a restarted process reopening its database
// would. Tests close the previous Backend before opening the next.
type Storage func(t *testing.T) store.Backend

// Run runs the contract; newStorage returns fresh, empty storage (schema
// in place, no rows) for each test.
func Run(t *testing.T, newStorage func(t *testing.T) Storage) {
	tests := []struct {
		name string
		run  func(t *testing.T, s Storage)
	}{
		{"records/round trip", testRoundTrip},
		{"records/rollback", testRollback},
		{"records/cancelled", testCancelled},
		{"records/updates", testUpdates},
		{"records/generation compare-and-swap", testGenerationCAS},
		{"records/unique keys", testUnique},
		{"records/references", testReferences},
		{"records/cascades", testCascades},
		{"records/ids increase", testIDsIncrease},
		{"records/many allocations in id order", testManyAllocations},
		{"metadata/set, replace, reopen", testMetadata},
		{"ledger/inventory writes survive reopen", testInventoryWritesSurviveReopen},
		{"ledger/inventory write errors change nothing", testInventoryWriteErrorsChangeNothing},
		{"ledger/inventory in use and usages", testInventoryInUseAndUsages},
		{"ledger/resource classes persist and guard", testResourceClassesPersistAndGuard},
		{"ledger/list providers filters", testListProvidersFilters},
		{"ledger/delete provider cleans up", testDeleteProviderCleansUp},
		{"ledger/update provider moves subtree", testUpdateProviderMovesSubtree},
		{"ledger/capacity", testCapacity},
		{"ledger/concurrent claims", testConcurrentClaims},
		{"ledger/consumer generation", testConsumerGeneration},
		{"ledger/failed writes leave upstream's consumers (8.0.0's capacity rule)", testLeftConsumers(store.CapacityStrict)},
		{"ledger/failed writes leave upstream's consumers (15.0.0's capacity rule)", testLeftConsumers(store.CapacityNoWorse)},
		{"ledger/snapshot follows writes", testSnapshotFollowsWrites},
		{"ledger/snapshot concurrent readers", testSnapshotConcurrentReaders},
		{"ledger/failed writes leave nothing", testFailedWrites},
		{"ledger/reopen sees acknowledged writes", testReopenSeesAcknowledged},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, newStorage(t)) })
	}
}

// env is a ledger open over one storage, and the backend under it.
type env struct {
	t       *testing.T
	ctx     context.Context
	storage Storage
	be      store.Backend
	l       *ledger.Ledger
}

// openLedger opens the storage and a ledger over it; the ledger is closed
// at the end of the test.
func openLedger(t *testing.T, s Storage) *env {
	t.Helper()
	e := &env{t: t, ctx: context.Background(), storage: s}
	e.open()
	t.Cleanup(func() { e.l.Close() })
	return e
}

func (e *env) open() {
	e.t.Helper()
	e.be = e.storage(e.t)
	l, err := ledger.New(e.ctx, e.be, ledger.Options{})
	if err != nil {
		e.be.Close()
		e.t.Fatalf("open ledger: %v", err)
	}
	e.l = l
}

// reopen closes the ledger and opens the storage again, so that
// everything after comes from storage.
func (e *env) reopen() {
	e.t.Helper()
	if err := e.l.Close(); err != nil {
		e.t.Fatal(err)
	}
	e.open()
}

// records loads what the storage holds now.
func (e *env) records() *store.Records {
	e.t.Helper()
	r, err := e.be.Load(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

// seed writes rows straight into the storage, behind the ledger's back,
// then reopens so the ledger loads them. fn gets the records as they were.
func (e *env) seed(fn func(tx store.Tx, r *store.Records)) {
	e.t.Helper()
	r := e.records()
	tx, err := e.be.Begin(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	fn(tx, r)
	if err := tx.Commit(); err != nil {
		e.t.Fatal(err)
	}
	e.reopen()
}

// providerID, classID and traitID find a row's id by its key.
func providerID(t *testing.T, r *store.Records, uuid string) int64 {
	t.Helper()
	return idOf(t, r.Providers, func(p store.ProviderRow) (string, int64) { return p.UUID, p.ID }, uuid)
}

func classID(t *testing.T, r *store.Records, name string) int64 {
	t.Helper()
	return idOf(t, r.ResourceClasses, func(c store.ResourceClassRow) (string, int64) { return c.Name, c.ID }, name)
}

func traitID(t *testing.T, r *store.Records, name string) int64 {
	t.Helper()
	return idOf(t, r.Traits, func(x store.TraitRow) (string, int64) { return x.Name, x.ID }, name)
}

func idOf[T any](t *testing.T, rows []T, keyID func(T) (string, int64), key string) int64 {
	t.Helper()
	for _, r := range rows {
		if k, id := keyID(r); k == key {
			return id
		}
	}
	t.Fatalf("no row %s", key)
	return 0
}

// race runs fn(0) … fn(n-1) at once and returns their errors.
func race(n int, fn func(i int) error) []error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = fn(i)
		}()
	}
	wg.Wait()
	return errs
}

// winners counts the nil errors and fails on any not of kind.
func winners(t *testing.T, errs []error, kind error) int {
	t.Helper()
	n := 0
	for _, err := range errs {
		switch {
		case err == nil:
			n++
		case !errors.Is(err, kind):
			t.Fatalf("unexpected error: %v", err)
		}
	}
	return n
}

// must fails the test on err.
func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// mustID is must for operations that return an id.
func mustID(t *testing.T) func(int64, error) int64 {
	return func(id int64, err error) int64 {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
}

const (
	rpUUID      = "7260669a-e3d4-4867-aaa7-683e2ab6958c"
	otherRPUUID = "2e1dda56-8b18-4fb9-8c5c-3125891b7143"
	consumerA   = "aaaaaaaa-0000-4000-8000-000000000001"
	consumerB   = "bbbbbbbb-0000-4000-8000-000000000002"
)

func inv(class string, total int64) store.Inventory {
	return store.Inventory{ResourceClass: class, InventoryAmounts: store.InventoryAmounts{Total: total, MinUnit: 1, MaxUnit: total, StepSize: 1, AllocationRatio: 1.0}}
}

func claim(consumer string, gen *int64, allocs ...store.Allocation) store.ConsumerAllocations {
	return store.ConsumerAllocations{ConsumerUUID: consumer, ProjectID: "p", UserID: "u", ConsumerType: "INSTANCE",
		CheckGeneration: true, Generation: gen, Allocations: allocs}
}

func on(rp, class string, used int64) store.Allocation {
	return store.Allocation{ProviderUUID: rp, ResourceClass: class, Used: used}
}

func gen(n int64) *int64 { return &n }

// newProvider creates a root provider named after its uuid with the given
// inventories.
func (e *env) newProvider(uuid string, invs ...store.Inventory) {
	e.t.Helper()
	if _, err := e.l.CreateProvider(e.ctx, store.NewProvider{UUID: uuid, Name: uuid}); err != nil {
		e.t.Fatal(err)
	}
	if len(invs) > 0 {
		if _, _, err := e.l.SetInventories(e.ctx, uuid, 0, invs); err != nil {
			e.t.Fatal(err)
		}
	}
}
