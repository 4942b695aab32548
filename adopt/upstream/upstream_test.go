package upstream

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/placementsrv/release"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
	"github.com/placement-syncd/placement-syncd/placementsrv/store/sqlite"
)

func sample() *store.Records {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 123456000, time.UTC)
	return &store.Records{
		ResourceClasses: []store.ResourceClassRow{{ID: 0, Name: "VCPU", CreatedAt: t0}, {ID: 10000, Name: "CUSTOM_GPU", CreatedAt: t0, UpdatedAt: t0.Add(time.Second)}},
		Traits:          []store.TraitRow{{ID: 3, Name: "HW_CPU_X86_AVX2", CreatedAt: t0}, {ID: 7, Name: "CUSTOM_SSD", CreatedAt: t0}},
		// 5 is moved under 9, a newer provider.
		Providers: []store.ProviderRow{
			{ID: 1, UUID: "00000000-0000-4000-8000-000000000001", Name: "cn1", Generation: 4, RootID: 1, CreatedAt: t0},
			{ID: 5, UUID: "00000000-0000-4000-8000-000000000005", Name: "moved", Generation: 2, ParentID: 9, RootID: 9, CreatedAt: t0},
			{ID: 9, UUID: "00000000-0000-4000-8000-000000000009", Name: "rack", Generation: 0, RootID: 9, CreatedAt: t0, UpdatedAt: t0},
		},
		Inventories:        []store.InventoryRow{{ProviderID: 1, ClassID: 0, InventoryAmounts: store.InventoryAmounts{Total: 8, Reserved: 1, MinUnit: 1, MaxUnit: 8, StepSize: 1, AllocationRatio: 2.5}, CreatedAt: t0}},
		ProviderTraits:     []store.ProviderTraitRow{{ProviderID: 1, TraitID: 3}, {ProviderID: 5, TraitID: 7}},
		Aggregates:         []store.AggregateRow{{ID: 2, UUID: "00000000-0000-4000-8000-0000000000a2"}},
		ProviderAggregates: []store.ProviderAggregateRow{{ProviderID: 1, AggregateID: 2}},
		Projects:           []store.ExternalIDRow{{ID: 1, ExternalID: "proj"}},
		Users:              []store.ExternalIDRow{{ID: 4, ExternalID: "user"}},
		ConsumerTypes:      []store.ConsumerTypeRow{{ID: 1, Name: "INSTANCE", CreatedAt: t0}},
		Consumers:          []store.ConsumerRow{{ID: 3, UUID: "00000000-0000-4000-8000-0000000000c3", ProjectID: 1, UserID: 4, ConsumerTypeID: 1, Generation: 2, CreatedAt: t0}},
		Allocations:        []store.AllocationRow{{ID: 11, ProviderID: 1, ConsumerID: 3, ClassID: 0, Used: 2, CreatedAt: t0}},
	}
}

// Write then Read gives back every row, ids, tree links and timestamps
// (to the microsecond SQLite keeps) included, and the head written, at
// each head.
func TestWriteRead_SQLite(t *testing.T) {
	ctx := context.Background()
	for _, h := range Heads() {
		path := filepath.Join(t.TempDir(), "placement.sqlite")
		db, err := sqlite.CreateForeign(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		want := sample()
		if err := Write(ctx, db, SQLite, h, want, want.ResourceClasses[0].CreatedAt); err != nil {
			t.Fatal(err)
		}
		db.Close()
		ro, err := sqlite.OpenForeignReadOnly(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		got, head, err := Read(ctx, ro, SQLite)
		if err != nil {
			t.Fatalf("%s: %v", h, err)
		}
		if !reflect.DeepEqual(got, want) || head != h {
			t.Errorf("%s: read back head %s:\n got %+v\nwant %+v", h, head, got, want)
		}
		if _, err := ro.Exec(`DELETE FROM traits`); err == nil {
			t.Error("the read-only handle wrote")
		}
		ro.Close()
		if _, err := sqlite.CreateForeign(ctx, path); !errors.Is(err, sqlite.ErrExists) {
			t.Errorf("CreateForeign over an existing file: %v", err)
		}
	}
}

// The heads differ by the five indexes 15.0.0's revision dropped, and
// by nothing else.
func TestDescribe_HeadsDifferInIndexesOnly(t *testing.T) {
	ctx := context.Background()
	desc := map[string]map[string]bool{}
	for _, h := range Heads() {
		db, err := sqlite.CreateForeign(ctx, filepath.Join(t.TempDir(), "p.sqlite"))
		if err != nil {
			t.Fatal(err)
		}
		if err := Write(ctx, db, SQLite, h, sample(), time.Now()); err != nil {
			t.Fatal(err)
		}
		lines, err := Describe(ctx, db, SQLite)
		db.Close()
		if err != nil {
			t.Fatal(err)
		}
		desc[h.Revision] = map[string]bool{}
		for _, l := range lines {
			desc[h.Revision][l] = true
		}
	}
	var only8, only15 []string
	for l := range desc[Rev8] {
		if !desc[Rev15][l] {
			only8 = append(only8, l)
		}
	}
	for l := range desc[Rev15] {
		if !desc[Rev8][l] {
			only15 = append(only15, l)
		}
	}
	sort.Strings(only8)
	want8 := []string{
		"alembic " + Rev8,
		"index inventories inventories_resource_provider_id_idx 0 resource_provider_id",
		"index inventories inventories_resource_provider_resource_class_idx 0 resource_provider_id,resource_class_id",
		"index placement_aggregates ix_placement_aggregates_uuid 0 uuid",
		"index resource_providers resource_providers_name_idx 0 name",
		"index resource_providers resource_providers_uuid_idx 0 uuid",
	}
	if !reflect.DeepEqual(only8, want8) || !reflect.DeepEqual(only15, []string{"alembic " + Rev15}) {
		t.Errorf("only at 8.0.0's head: %q\nonly at 15.0.0's: %q", only8, only15)
	}
}

func TestHeadOf(t *testing.T) {
	if h := HeadOf(release.V8); h.Revision != Rev8 {
		t.Errorf("HeadOf(8.0.0) = %s", h)
	}
	if h := HeadOf(release.V15); h.Revision != Rev15 || h.String() != "a082b8bb98d0 (15.0.0)" {
		t.Errorf("HeadOf(15.0.0) = %s", h)
	}
}

func TestRead_Refuses(t *testing.T) {
	ctx := context.Background()
	cases := map[string]struct {
		stmt, want string
	}{
		"newer": {`UPDATE alembic_version SET version_num = 'ffffffffffff'`,
			"alembic revision ffffffffffff, which is none of the heads this binary reads (422ece571366 (8.0.0), a082b8bb98d0 (15.0.0))"},
		"older": {`UPDATE alembic_version SET version_num = 'b5c396305c25'`,
			"alembic revision b5c396305c25, older than the heads this binary reads (422ece571366 (8.0.0), a082b8bb98d0 (15.0.0))"},
		"two rows":    {`INSERT INTO alembic_version VALUES ('422ece571366')`, "alembic_version holds 2 revisions (422ece571366, a082b8bb98d0), a branched history"},
		"empty":       {`DELETE FROM alembic_version`, "alembic_version is empty"},
		"no table":    {`DROP TABLE alembic_version`, "it has no alembic_version table"},
		"orphan":      {`UPDATE allocations SET consumer_id = 'nobody'`, "consumer nobody has no row in consumers"},
		"nameless rp": {`UPDATE resource_providers SET name = NULL WHERE id = 9`, "has no name (NULL)"},
	}
	for name, c := range cases {
		path := filepath.Join(t.TempDir(), "p.sqlite")
		db, err := sqlite.CreateForeign(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		if err := Write(ctx, db, SQLite, HeadOf(release.V15), sample(), time.Now()); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(c.stmt); err != nil {
			t.Fatal(err)
		}
		_, _, err = Read(ctx, db, SQLite)
		db.Close()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", name, err, c.want)
		}
	}
}
