package transfer

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/placementsrv/dbstore"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
	"github.com/placement-syncd/placement-syncd/placementsrv/store/sqlite"
)

// seeded opens a new database as a first start leaves it (standard names
// only) and returns its backend.
func seeded(t *testing.T) *sqlite.Backend {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "p.db")
	l, err := dbstore.OpenFile(ctx, path, dbstore.Options{Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	be, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { be.Close() })
	return be
}

func source() *store.Records {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return &store.Records{
		ResourceClasses: []store.ResourceClassRow{{ID: 0, Name: "VCPU", CreatedAt: t0}, {ID: 10001, Name: "CUSTOM_X", CreatedAt: t0}},
		Traits:          []store.TraitRow{{ID: 4, Name: "CUSTOM_B", CreatedAt: t0}, {ID: 9, Name: "CUSTOM_A", CreatedAt: t0}},
		Providers: []store.ProviderRow{
			{ID: 2, UUID: "00000000-0000-4000-8000-000000000002", Name: "child", Generation: 3, ParentID: 7, RootID: 7, CreatedAt: t0},
			{ID: 7, UUID: "00000000-0000-4000-8000-000000000007", Name: "root", Generation: 1, RootID: 7, CreatedAt: t0},
		},
		Inventories:    []store.InventoryRow{{ProviderID: 2, ClassID: 10001, InventoryAmounts: store.InventoryAmounts{Total: 4, MinUnit: 1, MaxUnit: 4, StepSize: 1, AllocationRatio: 1}, CreatedAt: t0}},
		ProviderTraits: []store.ProviderTraitRow{{ProviderID: 2, TraitID: 9}},
		Projects:       []store.ExternalIDRow{{ID: 5, ExternalID: "p"}},
		Users:          []store.ExternalIDRow{{ID: 6, ExternalID: "u"}},
		Consumers:      []store.ConsumerRow{{ID: 8, UUID: "00000000-0000-4000-8000-0000000000c8", ProjectID: 5, UserID: 6, Generation: 1, CreatedAt: t0}},
		Allocations:    []store.AllocationRow{{ID: 3, ProviderID: 2, ConsumerID: 8, ClassID: 10001, Used: 2, CreatedAt: t0}},
	}
}

func TestImport(t *testing.T) {
	ctx := context.Background()
	be := seeded(t)
	var progress []string
	counts, err := Import(ctx, be, source(), Options{Progress: func(table string, n int) { progress = append(progress, table) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(counts) != 12 || len(progress) != 12 || counts[2] != (Count{"resource_providers", 2}) {
		t.Errorf("counts %v, progress %v", counts, progress)
	}
	got, err := be.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Traits keep the source's order; the seeded standard names are gone.
	if len(got.Traits) != 2 || got.Traits[0].Name != "CUSTOM_B" || got.Traits[1].Name != "CUSTOM_A" || len(got.ResourceClasses) != 2 {
		t.Errorf("traits %+v, classes %+v", got.Traits, got.ResourceClasses)
	}
	// The child came first; its parent is linked once it exists.
	child, root := got.Providers[0], got.Providers[1]
	if child.Name != "child" || child.ParentID != root.ID || child.RootID != root.ID || root.RootID != root.ID || child.Generation != 3 {
		t.Errorf("providers %+v", got.Providers)
	}
	if len(got.Allocations) != 1 || got.Allocations[0].Used != 2 || got.Consumers[0].Generation != 1 {
		t.Errorf("allocations %+v consumers %+v", got.Allocations, got.Consumers)
	}
	if _, err := Import(ctx, be, source(), Options{}); !errors.Is(err, ErrNotEmpty) ||
		!strings.Contains(err.Error(), "2 resource providers, 1 consumers, 1 allocations, 1 projects, 1 users, 2 custom traits, 1 custom resource classes") {
		t.Errorf("second import: %v", err)
	}
	if _, err := Import(ctx, be, source(), Options{Replace: true}); err != nil {
		t.Fatalf("--replace: %v", err)
	}
	again, err := be.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Providers) != 2 || len(again.Allocations) != 1 || len(again.Projects) != 1 {
		t.Errorf("after --replace: %+v", again)
	}
}

// A failure at the last row leaves the target as it was.
func TestImport_FailureChangesNothing(t *testing.T) {
	ctx := context.Background()
	be := seeded(t)
	before, err := be.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	src := source()
	src.Allocations[0].ConsumerID = 99
	if _, err := Import(ctx, be, src, Options{}); err == nil || !strings.Contains(err.Error(), "allocation 3: consumer 99 does not exist in the source") {
		t.Fatalf("got %v", err)
	}
	after, err := be.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(before, after) {
		t.Error("a failed import changed the target")
	}
}
