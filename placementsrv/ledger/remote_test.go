package ledger

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/placementsrv/standard"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
	"github.com/placement-syncd/placement-syncd/placementsrv/store/feed"
)

// capturingBackend hands out the feed's real Recorder over the real
// SQLite transaction and keeps the operations of every transaction that
// committed, as a replica's change feed would carry them.
type capturingBackend struct {
	store.Backend
	committed *[][]feed.Op
}

func (b capturingBackend) Begin(ctx context.Context) (store.Tx, error) {
	tx, err := b.Backend.Begin(ctx)
	if err != nil {
		return nil, err
	}
	return &capturingTx{Recorder: feed.NewRecorder(tx), committed: b.committed}, nil
}

type capturingTx struct {
	*feed.Recorder
	committed *[][]feed.Op
}

func (t *capturingTx) Commit() error {
	if err := t.Recorder.Commit(); err != nil {
		return err
	}
	// Through the payload encoding, as the feed stores it.
	b, err := feed.Encode(t.Ops())
	if err != nil {
		return err
	}
	ops, err := feed.Decode(b)
	if err != nil {
		return err
	}
	*t.committed = append(*t.committed, ops)
	return nil
}

// TestRemoteApplyMatchesWriter runs writes of every kind on one ledger and
// applies the operations they committed to a second ledger's memory: it
// must then equal the writer's memory and a reload of the writer's
// database, and its patched read model must equal a rebuilt one.
func TestRemoteApplyMatchesWriter(t *testing.T) {
	ctx := context.Background()
	clock := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	opts := Options{Now: func() time.Time { clock = clock.Add(time.Millisecond); return clock }}
	writerDB, readerDB := newDB(t), newDB(t)
	w, err := New(ctx, openBackend(t, writerDB), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	clock = time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC) // seed both at the same instant
	r, err := New(ctx, openBackend(t, readerDB), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	if got, want := stateDump(r.st), stateDump(w.st); got != want {
		t.Fatalf("seeded states differ:\n%s", lineDiff(got, want))
	}
	var committed [][]feed.Op
	w.be = capturingBackend{Backend: w.be, committed: &committed}
	idx := newIDIndex(r.st)
	for step, write := range append(remoteScenario(), leftConsumerScenario()...) {
		if err := write(ctx, w); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		for _, ops := range committed {
			r.mu.Lock()
			r.st.usageLog = r.st.usageLog[:0]
			usageOnly := true
			for _, o := range ops {
				usageOnly = usageOnly && o.UsageOnly()
				if err := idx.apply(r.st, o); err != nil {
					t.Fatalf("step %d: apply %+v: %v", step, o, err)
				}
			}
			r.version++
			r.snap.noteWrite(usageOnly, r.st.usageLog)
			r.mu.Unlock()
		}
		committed = committed[:0]
		if got, want := stateDump(r.st), stateDump(w.st); got != want {
			t.Fatalf("step %d: applied state differs from the writer's:\n%s", step, lineDiff(got, want))
		}
		if r.st.nextCustomClassID != w.st.nextCustomClassID {
			t.Fatalf("step %d: next custom class id %d, writer's %d", step, r.st.nextCustomClassID, w.st.nextCustomClassID)
		}
		checkSnapshot(t, r, step)
	}
	w2 := reopen(t, w, writerDB)
	if got, want := stateDump(r.st), stateDump(w2.st); got != want {
		t.Fatalf("applied state differs from a reload:\n%s", lineDiff(got, want))
	}
}

// checkSnapshot compares r's read model (patched after usage-only
// changes) with one built from scratch.
func checkSnapshot(t *testing.T, r *Ledger, step int) {
	t.Helper()
	got, err := r.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := buildSnapshot(r.st, got.Version)
	if !reflect.DeepEqual(got.Providers, want.Providers) {
		t.Fatalf("step %d: read model differs from a rebuild", step)
	}
}

func remoteScenario() []func(context.Context, *Ledger) error {
	const root, child, other = "11111111-0000-4000-8000-000000000001", "11111111-0000-4000-8000-000000000002", "11111111-0000-4000-8000-000000000003"
	const cons = "22222222-0000-4000-8000-000000000001"
	gen := func(l *Ledger, uuid string) int64 {
		p, _ := l.GetProvider(context.Background(), uuid)
		return p.Generation
	}
	return []func(context.Context, *Ledger) error{
		func(ctx context.Context, l *Ledger) error {
			_, err := l.CreateProvider(ctx, store.NewProvider{UUID: root, Name: "root"})
			return err
		},
		func(ctx context.Context, l *Ledger) error {
			_, err := l.CreateProvider(ctx, store.NewProvider{UUID: child, Name: "child", ParentUUID: root})
			return err
		},
		func(ctx context.Context, l *Ledger) error {
			_, err := l.CreateProvider(ctx, store.NewProvider{UUID: other, Name: "other"})
			return err
		},
		func(ctx context.Context, l *Ledger) error {
			_, err := l.CreateResourceClass(ctx, "CUSTOM_GOLD")
			return err
		},
		func(ctx context.Context, l *Ledger) error {
			_, _, err := l.SetInventories(ctx, root, gen(l, root), []store.Inventory{inv("VCPU", 8), inv("MEMORY_MB", 4096), inv("CUSTOM_GOLD", 3)})
			return err
		},
		func(ctx context.Context, l *Ledger) error {
			_, _, err := l.SetInventories(ctx, child, gen(l, child), []store.Inventory{inv("VCPU", 4)})
			return err
		},
		func(ctx context.Context, l *Ledger) error {
			_, _, err := l.UpdateInventory(ctx, root, gen(l, root), inv("VCPU", 16))
			return err
		},
		func(ctx context.Context, l *Ledger) error {
			_, _, err := l.EnsureTrait(ctx, "CUSTOM_FAST")
			return err
		},
		func(ctx context.Context, l *Ledger) error {
			_, _, err := l.SetProviderTraits(ctx, root, gen(l, root), []string{"HW_CPU_X86_AVX", "CUSTOM_FAST"})
			return err
		},
		func(ctx context.Context, l *Ledger) error {
			g := gen(l, child)
			_, _, err := l.SetProviderAggregates(ctx, child, &g, []string{"33333333-0000-4000-8000-000000000001"})
			return err
		},
		func(ctx context.Context, l *Ledger) error {
			return l.ReplaceAllocations(ctx, []store.ConsumerAllocations{alReq(cons, nil,
				alOn(root, "VCPU", 2), alOn(root, "CUSTOM_GOLD", 1), alOn(child, "VCPU", 1))})
		},
		func(ctx context.Context, l *Ledger) error {
			return l.ReplaceAllocations(ctx, []store.ConsumerAllocations{alReq(cons, alGen(1), alOn(root, "VCPU", 4))})
		},
		func(ctx context.Context, l *Ledger) error {
			_, err := l.UpdateProvider(ctx, other, store.ProviderUpdate{Name: "renamed", ParentUUID: ptr(root)})
			return err
		},
		func(ctx context.Context, l *Ledger) error {
			_, err := l.RenameResourceClass(ctx, "CUSTOM_GOLD", "CUSTOM_SILVER")
			return err
		},
		func(ctx context.Context, l *Ledger) error { return l.DeleteConsumerAllocations(ctx, cons) },
		func(ctx context.Context, l *Ledger) error { return l.DeleteInventory(ctx, root, "CUSTOM_SILVER") },
		func(ctx context.Context, l *Ledger) error { return l.DeleteResourceClass(ctx, "CUSTOM_SILVER") },
		func(ctx context.Context, l *Ledger) error { return l.DeleteProviderTraits(ctx, root) },
		func(ctx context.Context, l *Ledger) error { return l.DeleteTrait(ctx, "CUSTOM_FAST") },
		func(ctx context.Context, l *Ledger) error { return l.DeleteProvider(ctx, other) },
		func(ctx context.Context, l *Ledger) error {
			_, err := l.CreateProvider(ctx, store.NewProvider{UUID: other, Name: "again"})
			return err
		},
	}
}

func ptr(s string) *string { return &s }

// stateDump renders every record in memory, its links and the id order of
// the provider list, deterministically.
func stateDump(st *state) string {
	var lines []string
	add := func(format string, args ...any) { lines = append(lines, fmt.Sprintf(format, args...)) }
	for _, p := range st.providers {
		parent := ""
		if p.parent != nil {
			parent = p.parent.uuid
		}
		add("rp %d %s %q gen=%d parent=%s root=%s kids=%d %v %v", p.id, p.uuid, p.name, p.generation, parent, p.root.uuid,
			len(p.children), p.createdAt, p.updatedAt)
		for c, i := range p.inventories {
			_, back := c.providers[p]
			add("inv %s %s %+v %v %v back=%v", p.uuid, c.name, i.InventoryAmounts, i.createdAt, i.updatedAt, back)
		}
		for c, n := range p.usage {
			add("usage %s %s %d", p.uuid, c.name, n)
		}
		for tr := range p.traits {
			_, back := tr.providers[p]
			add("trait %s %s back=%v", p.uuid, tr.name, back)
		}
		for a := range p.aggregates {
			_, back := a.members[p]
			add("agg %s %s back=%v", p.uuid, a.uuid, back)
		}
		add("allocs %s %d", p.uuid, len(p.allocs))
	}
	for _, c := range st.classes {
		add("class %d %s std=%v %v %v users=%d", c.id, c.name, c.standard, c.createdAt, c.updatedAt, len(c.providers))
	}
	for _, tr := range st.traits {
		add("trait %d %s std=%v %v %v users=%d", tr.id, tr.name, tr.standard, tr.createdAt, tr.updatedAt, len(tr.providers))
	}
	for _, a := range st.aggregates {
		add("aggregate %d %s members=%d", a.id, a.uuid, len(a.members))
	}
	for _, c := range st.consumers {
		var allocs []string
		for _, a := range c.allocs {
			allocs = append(allocs, fmt.Sprintf("%d:%s/%s=%d", a.id, a.provider.uuid, a.class.name, a.used))
		}
		add("consumer %d %s %s/%s %q gen=%d %v %v %v", c.id, c.uuid, c.projectID, c.userID, c.consumerType, c.generation,
			c.createdAt, c.updatedAt, allocs)
	}
	// Not nextCustomClassID: a reload takes it from the classes left,
	// while memory remembers deleted ones (remoteApplyStep compares it).
	add("projects %v users %v types %v", st.projects, st.users, st.consumerTypes)
	sort.Strings(lines)
	var order []string
	for _, p := range st.providerList {
		order = append(order, fmt.Sprint(p.id))
	}
	return strings.Join(lines, "\n") + "\nprovider order " + strings.Join(order, ",")
}

// lineDiff lists the lines only one side has.
func lineDiff(got, want string) string {
	g, w := map[string]bool{}, map[string]bool{}
	for _, l := range strings.Split(got, "\n") {
		g[l] = true
	}
	for _, l := range strings.Split(want, "\n") {
		w[l] = true
	}
	var out []string
	for l := range g {
		if !w[l] {
			out = append(out, "got:  "+l)
		}
	}
	for l := range w {
		if !g[l] {
			out = append(out, "want: "+l)
		}
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// TestLoadIndexesIDs checks the id index loading builds against one built
// from the loaded state: every record, by its id.
func TestLoadIndexesIDs(t *testing.T) {
	ctx := context.Background()
	db := newDB(t)
	w, err := New(ctx, openBackend(t, db), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	for step, write := range append(remoteScenario(), leftConsumerScenario()...) {
		if err := write(ctx, w); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
	}
	recs, err := w.be.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st, got, err := buildState(recs)
	if err != nil {
		t.Fatal(err)
	}
	want := newIDIndex(st)
	if len(got.providers) == 0 || len(got.projects) == 0 {
		t.Fatalf("scenario left no providers or projects: %d, %d", len(got.providers), len(got.projects))
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("index built while loading differs from one built from the state:\n got %+v\nwant %+v", got, want)
	}
}

// newIDIndex indexes st's records by id from the state itself, the
// reference the index built while loading must equal.
func newIDIndex(st *state) *idIndex {
	x := &idIndex{
		providers:  make(map[int64]*provider, len(st.providers)),
		classes:    make(map[int64]*resourceClass, len(st.classes)),
		traits:     make(map[int64]*trait, len(st.traits)),
		aggregates: make(map[int64]*aggregate, len(st.aggregates)),
		consumers:  make(map[int64]*consumer, len(st.consumers)),
		projects:   make(map[int64]string, len(st.projects)),
		users:      make(map[int64]string, len(st.users)),
		stdClasses: nameSet(standard.ResourceClasses()),
		stdTraits:  nameSet(standard.Traits()),
	}
	for _, p := range st.providers {
		x.providers[p.id] = p
	}
	for _, c := range st.classes {
		x.classes[c.id] = c
	}
	for _, t := range st.traits {
		x.traits[t.id] = t
	}
	for _, a := range st.aggregates {
		x.aggregates[a.id] = a
	}
	for _, c := range st.consumers {
		x.consumers[c.id] = c
	}
	for ext, id := range st.projects {
		x.projects[id] = ext
	}
	for ext, id := range st.users {
		x.users[id] = ext
	}
	return x
}

// leftConsumerScenario follows remoteScenario: a write naming an unknown
// provider, which commits its new consumer (and its new project, user and
// type) though it is refused, then the write that fills that consumer at
// generation 0.
func leftConsumerScenario() []func(context.Context, *Ledger) error {
	const root, left = "11111111-0000-4000-8000-000000000001", "22222222-0000-4000-8000-000000000002"
	return []func(context.Context, *Ledger) error{
		func(ctx context.Context, l *Ledger) error {
			req := alReq(left, nil, alOn("11111111-0000-4000-8000-0000000000ff", "VCPU", 1))
			req.ProjectID, req.UserID, req.ConsumerType = "left-p", "left-u", "LEFT"
			if err := l.ReplaceAllocations(ctx, []store.ConsumerAllocations{req}); !errors.Is(err, store.ErrInvalid) {
				return fmt.Errorf("write naming an unknown provider: %v, want %v", err, store.ErrInvalid)
			}
			return nil
		},
		func(ctx context.Context, l *Ledger) error {
			return l.ReplaceAllocations(ctx, []store.ConsumerAllocations{alReq(left, alGen(0), alOn(root, "VCPU", 1))})
		},
	}
}
