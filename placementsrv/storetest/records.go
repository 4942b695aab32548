package storetest

import (
	"cmp"
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// rec is one storage opened at the record level.
type rec struct {
	t       *testing.T
	ctx     context.Context
	storage Storage
	be      store.Backend
}

func openRecords(t *testing.T, s Storage) *rec {
	t.Helper()
	r := &rec{t: t, ctx: context.Background(), storage: s, be: s(t)}
	t.Cleanup(func() { r.be.Close() })
	return r
}

// reopen closes the backend and opens the storage again.
func (r *rec) reopen() {
	r.t.Helper()
	must(r.t, r.be.Close())
	r.be = r.storage(r.t)
}

func (r *rec) load() *store.Records {
	r.t.Helper()
	recs, err := r.be.Load(r.ctx)
	must(r.t, err)
	sortLinks(recs)
	return recs
}

// write runs fn in a transaction and commits it.
func (r *rec) write(fn func(tx store.Tx)) {
	r.t.Helper()
	tx, err := r.be.Begin(r.ctx)
	must(r.t, err)
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	fn(tx)
	must(r.t, tx.Commit())
}

// attempt runs fn in a transaction that it then rolls back, returning
// fn's error.
func (r *rec) attempt(fn func(tx store.Tx) error) error {
	r.t.Helper()
	tx, err := r.be.Begin(r.ctx)
	must(r.t, err)
	defer func() { _ = tx.Rollback() }()
	return fn(tx)
}

// sortLinks orders the link rows, which Load returns in any order.
func sortLinks(r *store.Records) {
	slices.SortFunc(r.Inventories, func(a, b store.InventoryRow) int {
		return cmp.Or(cmp.Compare(a.ProviderID, b.ProviderID), cmp.Compare(a.ClassID, b.ClassID))
	})
	slices.SortFunc(r.ProviderTraits, func(a, b store.ProviderTraitRow) int {
		return cmp.Or(cmp.Compare(a.ProviderID, b.ProviderID), cmp.Compare(a.TraitID, b.TraitID))
	})
	slices.SortFunc(r.ProviderAggregates, func(a, b store.ProviderAggregateRow) int {
		return cmp.Or(cmp.Compare(a.ProviderID, b.ProviderID), cmp.Compare(a.AggregateID, b.AggregateID))
	})
}

// at is a time with nanoseconds, in UTC as Load returns it.
func at(sec int) time.Time {
	return time.Date(2024, 5, 6, 7, 8, sec, 123456789, time.UTC)
}

// fixture is one row of every kind, as written and as Load must return it.
type fixture struct {
	want store.Records
}

// writeFixture inserts one row of every kind in tx.
func writeFixture(t *testing.T, ctx context.Context, tx store.Tx) fixture {
	id := mustID(t)
	w := store.Records{
		ResourceClasses: []store.ResourceClassRow{{ID: 0, Name: "VCPU", CreatedAt: at(1)}, {ID: 10000, Name: "CUSTOM_X", CreatedAt: at(1), UpdatedAt: at(2)}},
		Traits:          []store.TraitRow{{Name: "CUSTOM_T", CreatedAt: at(3), UpdatedAt: at(4)}},
		Providers: []store.ProviderRow{{UUID: "root", Name: "root", Generation: 3, CreatedAt: at(5), UpdatedAt: at(6)},
			{UUID: "child", Name: "child", CreatedAt: at(7)}},
		ConsumerTypes: []store.ConsumerTypeRow{{Name: "INSTANCE", CreatedAt: at(8)}},
		Consumers:     []store.ConsumerRow{{UUID: "c1", Generation: 2, CreatedAt: at(9), UpdatedAt: at(10)}, {UUID: "c2", CreatedAt: at(11)}},
	}
	for _, c := range w.ResourceClasses {
		must(t, tx.InsertResourceClass(ctx, c))
	}
	w.Traits[0].ID = id(tx.InsertTrait(ctx, w.Traits[0]))
	w.Providers[0].ID = id(tx.InsertProvider(ctx, w.Providers[0]))
	w.Providers[0].RootID = w.Providers[0].ID
	w.Providers[1].ParentID, w.Providers[1].RootID = w.Providers[0].ID, w.Providers[0].ID
	w.Providers[1].ID = id(tx.InsertProvider(ctx, w.Providers[1]))
	root := w.Providers[0].ID
	w.Inventories = []store.InventoryRow{{ProviderID: root, ClassID: 10000, CreatedAt: at(12), UpdatedAt: at(13),
		InventoryAmounts: store.InventoryAmounts{Total: 8, Reserved: 1, MinUnit: 2, MaxUnit: 6, StepSize: 2, AllocationRatio: 1.5}}}
	must(t, tx.InsertInventory(ctx, w.Inventories[0]))
	must(t, tx.AddProviderTrait(ctx, root, w.Traits[0].ID))
	w.ProviderTraits = []store.ProviderTraitRow{{ProviderID: root, TraitID: w.Traits[0].ID}}
	w.Aggregates = []store.AggregateRow{{UUID: "agg"}}
	w.Aggregates[0].ID = id(tx.InsertAggregate(ctx, "agg"))
	must(t, tx.AddProviderAggregate(ctx, w.Providers[1].ID, w.Aggregates[0].ID))
	w.ProviderAggregates = []store.ProviderAggregateRow{{ProviderID: w.Providers[1].ID, AggregateID: w.Aggregates[0].ID}}
	w.Projects = []store.ExternalIDRow{{ExternalID: "proj", ID: id(tx.InsertProject(ctx, "proj"))}}
	w.Users = []store.ExternalIDRow{{ExternalID: "user", ID: id(tx.InsertUser(ctx, "user"))}}
	w.ConsumerTypes[0].ID = id(tx.InsertConsumerType(ctx, w.ConsumerTypes[0]))
	for i := range w.Consumers {
		w.Consumers[i].ProjectID, w.Consumers[i].UserID = w.Projects[0].ID, w.Users[0].ID
	}
	w.Consumers[0].ConsumerTypeID = w.ConsumerTypes[0].ID
	for i := range w.Consumers {
		w.Consumers[i].ID = id(tx.InsertConsumer(ctx, w.Consumers[i]))
	}
	w.Allocations = []store.AllocationRow{
		{ProviderID: root, ConsumerID: w.Consumers[0].ID, ClassID: 10000, Used: 2, CreatedAt: at(14), UpdatedAt: at(15)},
		{ProviderID: root, ConsumerID: w.Consumers[1].ID, ClassID: 10000, Used: 4, CreatedAt: at(16)},
	}
	for i := range w.Allocations {
		w.Allocations[i].ID = id(tx.InsertAllocation(ctx, w.Allocations[i]))
	}
	return fixture{want: w}
}

func sameRecords(t *testing.T, what string, got *store.Records, want store.Records) {
	t.Helper()
	if !reflect.DeepEqual(*got, want) {
		t.Fatalf("%s:\n got %+v\nwant %+v", what, *got, want)
	}
}

// testRoundTrip writes one row of every kind and reads it back, before
// and after reopening: every field, ids and times to the nanosecond.
func testRoundTrip(t *testing.T, s Storage) {
	r := openRecords(t, s)
	if got := r.load(); !reflect.DeepEqual(*got, store.Records{}) {
		t.Fatalf("fresh storage holds %+v", *got)
	}
	var f fixture
	r.write(func(tx store.Tx) { f = writeFixture(t, r.ctx, tx) })
	for _, p := range f.want.Providers {
		if p.ID <= 0 {
			t.Fatalf("provider id %d", p.ID)
		}
	}
	sameRecords(t, "after commit", r.load(), f.want)
	r.reopen()
	sameRecords(t, "after reopen", r.load(), f.want)
	// A time in another zone comes back as the same instant in UTC.
	zoned := at(50).In(time.FixedZone("X", 3600))
	r.write(func(tx store.Tx) {
		mustID(t)(tx.InsertTrait(r.ctx, store.TraitRow{Name: "CUSTOM_Z", CreatedAt: zoned}))
	})
	if got := r.load().Traits; !reflect.DeepEqual(got[len(got)-1].CreatedAt, at(50)) {
		t.Fatalf("time written in zone X read back as %v, want %v", got[len(got)-1].CreatedAt, at(50))
	}
}

// testRollback checks that a rolled back transaction leaves nothing, and
// that the storage stays usable after it.
func testRollback(t *testing.T, s Storage) {
	r := openRecords(t, s)
	if err := r.attempt(func(tx store.Tx) error { writeFixture(t, r.ctx, tx); return nil }); err != nil {
		t.Fatal(err)
	}
	if got := r.load(); !reflect.DeepEqual(*got, store.Records{}) {
		t.Fatalf("rolled back rows visible: %+v", *got)
	}
	var f fixture
	r.write(func(tx store.Tx) { f = writeFixture(t, r.ctx, tx) })
	_ = r.attempt(func(tx store.Tx) error {
		mustID(t)(tx.InsertProvider(r.ctx, store.ProviderRow{UUID: "gone", Name: "gone", CreatedAt: at(1)}))
		must(t, tx.BumpProviderGeneration(r.ctx, f.want.Providers[0].ID, 3, at(2)))
		must(t, tx.DeleteConsumer(r.ctx, f.want.Consumers[1].ID))
		return nil
	})
	r.reopen()
	sameRecords(t, "after a rollback", r.load(), f.want)
}

// testCancelled checks that a transaction whose context ends before
// Commit is discarded.
func testCancelled(t *testing.T, s Storage) {
	r := openRecords(t, s)
	ctx, cancel := context.WithCancel(r.ctx)
	tx, err := r.be.Begin(ctx)
	must(t, err)
	mustID(t)(tx.InsertProject(ctx, "p"))
	cancel()
	if err := tx.Commit(); err == nil {
		t.Fatal("commit after the context ended succeeded")
	}
	_ = tx.Rollback()
	if got := r.load(); len(got.Projects) != 0 {
		t.Fatalf("cancelled write visible: %+v", got.Projects)
	}
	r.write(func(tx store.Tx) { mustID(t)(tx.InsertProject(r.ctx, "p")) })
	if got := r.load(); len(got.Projects) != 1 {
		t.Fatalf("storage unusable after a cancelled transaction: %+v", got.Projects)
	}
}

// testIDsIncrease checks that a new row's id is above every id in its
// table, after deletes too.
func testIDsIncrease(t *testing.T, s Storage) {
	r := openRecords(t, s)
	var ids []int64
	r.write(func(tx store.Tx) {
		for _, n := range []string{"a", "b", "c"} {
			ids = append(ids, mustID(t)(tx.InsertProvider(r.ctx, store.ProviderRow{UUID: n, Name: n, CreatedAt: at(1)})))
		}
	})
	r.write(func(tx store.Tx) { must(t, tx.DeleteProvider(r.ctx, ids[1])) })
	var d int64
	r.write(func(tx store.Tx) {
		d = mustID(t)(tx.InsertProvider(r.ctx, store.ProviderRow{UUID: "d", Name: "d", CreatedAt: at(1)}))
	})
	if !(ids[0] < ids[1] && ids[1] < ids[2] && ids[2] < d) {
		t.Fatalf("ids %v then %d: not increasing", ids, d)
	}
	var got []string
	for _, p := range r.load().Providers {
		got = append(got, p.UUID)
	}
	if !slices.Equal(got, []string{"a", "c", "d"}) {
		t.Fatalf("providers in id order: %v", got)
	}
}

// testManyAllocations checks that Load returns every allocation once, in
// id order, when there are many and deletions left gaps in their ids (a
// store may read a large table in parts).
func testManyAllocations(t *testing.T, s Storage) {
	r, w := committedFixture(t, s)
	root, class := w.Providers[0].ID, w.ResourceClasses[1].ID
	var consumers []int64
	r.write(func(tx store.Tx) {
		for i := range 40 {
			c := store.ConsumerRow{UUID: fmt.Sprintf("many-%d", i), ProjectID: w.Projects[0].ID, UserID: w.Users[0].ID, CreatedAt: at(30)}
			consumers = append(consumers, mustID(t)(tx.InsertConsumer(r.ctx, c)))
		}
		for n := range 400 {
			a := store.AllocationRow{ProviderID: root, ConsumerID: consumers[n%len(consumers)], ClassID: class, Used: int64(n + 1), CreatedAt: at(31)}
			a.ID = mustID(t)(tx.InsertAllocation(r.ctx, a))
			w.Allocations = append(w.Allocations, a)
		}
	})
	// Every third consumer's allocations go: gaps all through the ids.
	r.write(func(tx store.Tx) {
		for i := 0; i < len(consumers); i += 3 {
			must(t, tx.DeleteConsumerAllocations(r.ctx, consumers[i]))
		}
	})
	w.Allocations = slices.DeleteFunc(w.Allocations, func(a store.AllocationRow) bool {
		i := slices.Index(consumers, a.ConsumerID)
		return i >= 0 && i%3 == 0
	})
	r.reopen()
	if got := r.load().Allocations; !reflect.DeepEqual(got, w.Allocations) {
		t.Fatalf("allocations: got %d rows, want %d in id order:\n got %v\nwant %v", len(got), len(w.Allocations), got, w.Allocations)
	}
}
