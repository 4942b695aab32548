package storetest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/placementsrv/ledger"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

var errInjected = errors.New("injected failure")

// faultyBackend makes the failAt-th counted step of its transactions fail
// (Begin, Commit and the operations faultyTx overrides count), so a test
// can fail a write at each point it reaches the backend.
type faultyBackend struct {
	store.Backend
	failAt, steps int
}

func (b *faultyBackend) fail() error {
	b.steps++
	if b.steps == b.failAt {
		return errInjected
	}
	return nil
}

func (b *faultyBackend) Begin(ctx context.Context) (store.Tx, error) {
	if err := b.fail(); err != nil {
		return nil, err
	}
	tx, err := b.Backend.Begin(ctx)
	if err != nil {
		return nil, err
	}
	return &faultyTx{Tx: tx, b: b}, nil
}

// faultyTx counts the operations of claims, inventory writes and
// reshapes; the others pass straight through.
type faultyTx struct {
	store.Tx
	b *faultyBackend
}

// step runs op unless this is the step to fail.
func (x *faultyTx) step(op func() error) error {
	if err := x.b.fail(); err != nil {
		return err
	}
	return op()
}

func (x *faultyTx) Commit() error { return x.step(x.Tx.Commit) }

func (x *faultyTx) InsertInventory(ctx context.Context, i store.InventoryRow) error {
	return x.step(func() error { return x.Tx.InsertInventory(ctx, i) })
}

func (x *faultyTx) UpdateInventory(ctx context.Context, i store.InventoryRow) error {
	return x.step(func() error { return x.Tx.UpdateInventory(ctx, i) })
}

func (x *faultyTx) BumpProviderGeneration(ctx context.Context, id, expected int64, at time.Time) error {
	return x.step(func() error { return x.Tx.BumpProviderGeneration(ctx, id, expected, at) })
}

func (x *faultyTx) BumpConsumerGeneration(ctx context.Context, id, expected int64, at time.Time) error {
	return x.step(func() error { return x.Tx.BumpConsumerGeneration(ctx, id, expected, at) })
}

func (x *faultyTx) InsertAllocation(ctx context.Context, a store.AllocationRow) (id int64, err error) {
	err = x.step(func() (err error) { id, err = x.Tx.InsertAllocation(ctx, a); return err })
	return id, err
}

func (x *faultyTx) InsertConsumer(ctx context.Context, c store.ConsumerRow) (id int64, err error) {
	err = x.step(func() (err error) { id, err = x.Tx.InsertConsumer(ctx, c); return err })
	return id, err
}

// testFailedWrites fails each write at every step it reaches the backend
// in turn: the ledger's answers and the storage must stay as they were,
// until the write succeeds; a reopen then sees the same.
func testFailedWrites(t *testing.T, s Storage) {
	ctx := context.Background()
	fb := &faultyBackend{Backend: s(t)}
	l, err := ledger.New(ctx, fb, ledger.Options{})
	must(t, err)
	closed := false
	t.Cleanup(func() {
		if !closed {
			l.Close()
		}
	})
	for i, write := range scenario() {
		for k := 1; ; k++ {
			before, stored := dump(t, ctx, l), loadSorted(t, fb.Backend)
			fb.failAt, fb.steps = k, 0
			err := write(ctx, l)
			fb.failAt = 0
			if err == nil {
				if k == 1 {
					t.Fatalf("write %d: never reached the backend", i)
				}
				break
			}
			if !errors.Is(err, errInjected) {
				t.Fatalf("write %d failing at step %d: %v", i, k, err)
			}
			if got := dump(t, ctx, l); got != before {
				t.Fatalf("write %d failing at step %d changed the state:\n%s\n---\n%s", i, k, before, got)
			}
			if got := loadSorted(t, fb.Backend); !reflect.DeepEqual(got, stored) {
				t.Fatalf("write %d failing at step %d changed the storage", i, k)
			}
		}
	}
	want := dump(t, ctx, l)
	closed = true
	must(t, l.Close())
	e := openLedger(t, s)
	if got := dump(t, ctx, e.l); got != want {
		t.Fatalf("after reopen:\n%s\nwant:\n%s", got, want)
	}
}

func loadSorted(t *testing.T, be store.Backend) *store.Records {
	t.Helper()
	r, err := be.Load(context.Background())
	must(t, err)
	sortLinks(r)
	return r
}

// scenario is a sequence of writes across every family, each of which
// succeeds after the previous ones.
func scenario() []func(ctx context.Context, l *ledger.Ledger) error {
	setInv := func(uuid string, g int64, invs ...store.Inventory) func(ctx context.Context, l *ledger.Ledger) error {
		return func(ctx context.Context, l *ledger.Ledger) error {
			_, _, err := l.SetInventories(ctx, uuid, g, invs)
			return err
		}
	}
	create := func(uuid, parent string) func(ctx context.Context, l *ledger.Ledger) error {
		return func(ctx context.Context, l *ledger.Ledger) error {
			_, err := l.CreateProvider(ctx, store.NewProvider{UUID: uuid, Name: uuid, ParentUUID: parent})
			return err
		}
	}
	claimB := claim(consumerB, nil, on(rpUUID, "VCPU", 1))
	claimB.ProjectID, claimB.UserID, claimB.ConsumerType = "p2", "u2", "MIGRATION"
	return []func(ctx context.Context, l *ledger.Ledger) error{
		create(rpUUID, ""),
		setInv(rpUUID, 0, inv("VCPU", 8), inv("DISK_GB", 100)),
		create(otherRPUUID, rpUUID),
		setInv(otherRPUUID, 0, inv("DISK_GB", 50)),
		func(ctx context.Context, l *ledger.Ledger) error {
			return l.ReplaceAllocations(ctx, []store.ConsumerAllocations{
				claim(consumerA, nil, on(rpUUID, "VCPU", 2), on(otherRPUUID, "DISK_GB", 10)), claimB})
		},
		func(ctx context.Context, l *ledger.Ledger) error {
			return l.ReplaceAllocations(ctx, []store.ConsumerAllocations{
				claim(consumerA, gen(1), on(rpUUID, "VCPU", 4)), claim(consumerB, gen(1))})
		},
		func(ctx context.Context, l *ledger.Ledger) error {
			return l.Reshape(ctx, []store.ProviderInventories{
				{ProviderUUID: rpUUID, Generation: 3, Inventories: []store.Inventory{inv("VCPU", 8)}},
				{ProviderUUID: otherRPUUID, Generation: 2, Inventories: []store.Inventory{inv("DISK_GB", 50), inv("MEMORY_MB", 64)}},
			}, []store.ConsumerAllocations{claim(consumerA, gen(2), on(rpUUID, "VCPU", 4), on(otherRPUUID, "MEMORY_MB", 32))})
		},
		func(ctx context.Context, l *ledger.Ledger) error {
			_, _, err := l.UpdateInventory(ctx, otherRPUUID, 5, inv("DISK_GB", 60))
			return err
		},
		func(ctx context.Context, l *ledger.Ledger) error {
			_, _, err := l.EnsureTrait(ctx, "CUSTOM_GPU")
			return err
		},
		func(ctx context.Context, l *ledger.Ledger) error {
			_, _, err := l.SetProviderTraits(ctx, rpUUID, 6, []string{"CUSTOM_GPU", "HW_CPU_X86_AVX"})
			return err
		},
		func(ctx context.Context, l *ledger.Ledger) error {
			_, _, err := l.SetProviderAggregates(ctx, rpUUID, gen(7), []string{"agg1", "agg2"})
			return err
		},
		func(ctx context.Context, l *ledger.Ledger) error { return l.DeleteConsumerAllocations(ctx, consumerA) },
		func(ctx context.Context, l *ledger.Ledger) error { return l.DeleteProvider(ctx, otherRPUUID) },
	}
}

// dump renders everything the store answers, through store.Store only,
// so two stores (or one before and after a write) compare as strings.
func dump(t *testing.T, ctx context.Context, st store.Store) string {
	t.Helper()
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	classes, err := st.ListResourceClasses(ctx)
	must(t, err)
	for _, c := range classes {
		if !c.Standard {
			line("class %+v", c)
		}
	}
	traits, err := st.ListTraits(ctx, store.TraitFilter{NamePrefix: "CUSTOM_"})
	must(t, err)
	line("traits %+v", traits)
	ps, err := st.ListProviders(ctx, store.ProviderFilter{})
	must(t, err)
	projects := map[string]bool{}
	for _, p := range ps {
		_, invs, err := st.GetInventories(ctx, p.UUID)
		must(t, err)
		_, tr, err := st.ProviderTraits(ctx, p.UUID)
		must(t, err)
		_, aggs, err := st.ProviderAggregates(ctx, p.UUID)
		must(t, err)
		_, usages, err := st.ProviderUsages(ctx, p.UUID)
		must(t, err)
		_, held, err := st.ProviderAllocations(ctx, p.UUID)
		must(t, err)
		line("provider %+v\n inventories %+v\n traits %+v\n aggregates %v\n usages %v\n allocations %+v", p, invs, tr, aggs, usages, held)
		for _, h := range held {
			projects[h.Consumer.ProjectID] = true
			all, err := st.ConsumerAllocations(ctx, h.Consumer.UUID)
			must(t, err)
			line(" consumer %+v", all)
		}
	}
	for _, p := range slices.Sorted(maps.Keys(projects)) {
		u, err := st.TotalUsages(ctx, store.UsageFilter{ProjectID: p})
		must(t, err)
		line("usages of %s: %v", p, u)
	}
	return b.String()
}

// testReopenSeesAcknowledged runs writes of every kind the fault scenario
// does not, then checks that a reopen answers exactly as before.
func testReopenSeesAcknowledged(t *testing.T, s Storage) {
	e := openLedger(t, s)
	ctx, l := e.ctx, e.l
	for _, w := range scenario()[:7] {
		must(t, w(ctx, l))
	}
	_, err := l.UpdateProvider(ctx, otherRPUUID, store.ProviderUpdate{Name: "renamed", ParentUUID: new(""), AllowReparent: true})
	must(t, err)
	_, err = l.CreateResourceClass(ctx, "CUSTOM_A")
	must(t, err)
	_, err = l.RenameResourceClass(ctx, "CUSTOM_A", "CUSTOM_B")
	must(t, err)
	_, _, err = l.EnsureResourceClass(ctx, "CUSTOM_C")
	must(t, err)
	must(t, l.DeleteResourceClass(ctx, "CUSTOM_C"))
	_, _, err = l.AddInventory(ctx, rpUUID, inv("CUSTOM_B", 5))
	must(t, err)
	must(t, l.DeleteInventory(ctx, otherRPUUID, "DISK_GB"))
	_, _, err = l.EnsureTrait(ctx, "CUSTOM_T")
	must(t, err)
	_, _, err = l.SetProviderTraits(ctx, otherRPUUID, 6, []string{"CUSTOM_T"})
	must(t, err)
	must(t, l.DeleteProviderTraits(ctx, otherRPUUID))
	_, _, err = l.SetProviderAggregates(ctx, otherRPUUID, nil, []string{"agg"})
	must(t, err)
	// Same consumer, new project, user and type: the consumer row changes.
	c := claim(consumerA, gen(3), on(rpUUID, "CUSTOM_B", 5))
	c.ProjectID, c.UserID, c.ConsumerType = "p3", "u3", "MIGRATION"
	must(t, l.ReplaceAllocations(ctx, []store.ConsumerAllocations{c}))
	want := dump(t, ctx, l)
	for range 2 {
		e.reopen()
		if got := dump(t, ctx, e.l); got != want {
			t.Fatalf("after reopen:\n%s\nwant:\n%s", got, want)
		}
	}
}
