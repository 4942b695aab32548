package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// openTestStore opens a fresh store in a temporary directory.
func openTestStore(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(context.Background(), path, Options{Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func uuidN(n int) string {
	return "00000000-0000-4000-8000-" + strings.Repeat("0", 11) + string(rune('a'+n))
}

// seedFilterFixture creates providers p0..p3 (p1 a child of p0) and, with
// plain SQL as another family's code would, their inventories, usage,
// traits and aggregates; then reopens the store so everything is loaded
// from the database.
func seedFilterFixture(t *testing.T) *Store {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "p.db")
	s, err := Open(ctx, path, Options{Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	for i, parent := range []string{"", uuidN(0), "", ""} {
		if _, err := s.CreateProvider(ctx, store.NewProvider{UUID: uuidN(i), Name: "p" + string(rune('0'+i)), ParentUUID: parent}); err != nil {
			t.Fatal(err)
		}
	}
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := s.db.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	id := func(table, col, val string) int64 {
		t.Helper()
		var n int64
		if err := s.db.QueryRowContext(ctx, "SELECT id FROM "+table+" WHERE "+col+" = ?", val).Scan(&n); err != nil {
			t.Fatalf("%s %s: %v", table, val, err)
		}
		return n
	}
	vcpu := id("resource_classes", "name", "VCPU")
	disk := id("resource_classes", "name", "DISK_GB")
	// p0: 8 VCPU (4 used, ratio 1); p1: 4 VCPU step 2 max 2; p2: 100 DISK_GB reserved 50; p3: none.
	exec(`INSERT INTO inventories VALUES (?, ?, 8, 0, 1, 8, 1, 1.0, 0, NULL)`, id("resource_providers", "uuid", uuidN(0)), vcpu)
	exec(`INSERT INTO inventories VALUES (?, ?, 4, 0, 1, 2, 2, 1.0, 0, NULL)`, id("resource_providers", "uuid", uuidN(1)), vcpu)
	exec(`INSERT INTO inventories VALUES (?, ?, 100, 50, 1, 100, 1, 1.5, 0, NULL)`, id("resource_providers", "uuid", uuidN(2)), disk)
	exec(`INSERT INTO projects (id, external_id) VALUES (1, 'p')`)
	exec(`INSERT INTO users (id, external_id) VALUES (1, 'u')`)
	exec(`INSERT INTO consumers (id, uuid, project_id, user_id, generation, created_at) VALUES (1, 'c', 1, 1, 0, 0)`)
	exec(`INSERT INTO allocations (resource_provider_id, consumer_id, resource_class_id, used, created_at) VALUES (?, 1, ?, 4, 0)`, id("resource_providers", "uuid", uuidN(0)), vcpu)
	for _, pt := range []struct {
		p     int
		trait string
	}{{0, "HW_CPU_X86_AVX"}, {1, "HW_CPU_X86_AVX"}, {1, "HW_CPU_X86_SSE"}, {2, "STORAGE_DISK_SSD"}} {
		exec(`INSERT INTO resource_provider_traits VALUES (?, ?)`, id("resource_providers", "uuid", uuidN(pt.p)), id("traits", "name", pt.trait))
	}
	exec(`INSERT INTO placement_aggregates (id, uuid) VALUES (1, 'agg1'), (2, 'agg2')`)
	exec(`INSERT INTO resource_provider_aggregates VALUES (?, 1), (?, 1), (?, 2)`,
		id("resource_providers", "uuid", uuidN(0)), id("resource_providers", "uuid", uuidN(2)), id("resource_providers", "uuid", uuidN(3)))
	s.Close()
	return openTestStore(t, path)
}

func TestListProvidersFilters(t *testing.T) {
	s := seedFilterFixture(t)
	ctx := context.Background()
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
			ps, err := s.ListProviders(ctx, tc.f)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("err %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, p := range ps {
				names = append(names, p.Name)
			}
			if got := strings.Join(names, ","); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestDeleteProviderCleansUp(t *testing.T) {
	s := seedFilterFixture(t)
	ctx := context.Background()
	if err := s.DeleteProvider(ctx, uuidN(0)); !errors.Is(err, store.ErrCannotDeleteParent) {
		t.Fatalf("delete parent: %v", err)
	}
	if err := s.DeleteProvider(ctx, uuidN(1)); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteProvider(ctx, uuidN(0)); !errors.Is(err, store.ErrProviderInUse) {
		t.Fatalf("delete provider with allocations: %v", err)
	}
	if err := s.DeleteProvider(ctx, uuidN(2)); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`SELECT count(*) FROM inventories i JOIN resource_providers p ON p.id = i.resource_provider_id WHERE p.uuid IN (?, ?)`,
		`SELECT count(*) FROM resource_providers WHERE uuid IN (?, ?)`,
	} {
		var n int
		if err := s.db.QueryRowContext(ctx, q, uuidN(1), uuidN(2)).Scan(&n); err != nil || n != 0 {
			t.Errorf("%s: %d rows, %v", q, n, err)
		}
	}
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM resource_provider_traits`).Scan(&n); err != nil || n != 1 {
		t.Errorf("traits left: %d, %v", n, err)
	}
	// Memory agrees with the database.
	ps, err := s.ListProviders(ctx, store.ProviderFilter{Required: [][]string{{"HW_CPU_X86_AVX"}}})
	if err != nil || len(ps) != 1 || ps[0].Name != "p0" {
		t.Errorf("after delete: %v, %v", ps, err)
	}
	ps, err = s.ListProviders(ctx, store.ProviderFilter{MemberOf: [][]string{{"agg1"}}})
	if err != nil || len(ps) != 1 {
		t.Errorf("aggregate members after delete: %v, %v", ps, err)
	}
}

func TestUpdateProviderMovesSubtree(t *testing.T) {
	s := seedFilterFixture(t)
	ctx := context.Background()
	// p0 (with child p1) moves under p3: both now have root p3.
	parent := uuidN(3)
	if _, err := s.UpdateProvider(ctx, uuidN(0), store.ProviderUpdate{Name: "p0", ParentUUID: &parent}); err != nil {
		t.Fatal(err)
	}
	check := func(st *Store) {
		t.Helper()
		for _, u := range []string{uuidN(0), uuidN(1)} {
			p, err := st.GetProvider(ctx, u)
			if err != nil || p.RootUUID != parent {
				t.Errorf("%s: root %q, %v", u, p.RootUUID, err)
			}
		}
		ps, _ := st.ListProviders(ctx, store.ProviderFilter{InTree: parent})
		if len(ps) != 3 {
			t.Errorf("tree of p3 has %d providers", len(ps))
		}
	}
	check(s)
	// The database agrees: reload it.
	var root sql.NullString
	if err := s.db.QueryRowContext(ctx, `SELECT r.uuid FROM resource_providers p JOIN resource_providers r ON r.id = p.root_provider_id WHERE p.uuid = ?`, uuidN(1)).Scan(&root); err != nil || root.String != parent {
		t.Errorf("stored root of p1: %v, %v", root, err)
	}
	// Moving p3 under p1 would make a loop; un-parenting p0 needs 1.37.
	child := uuidN(1)
	if _, err := s.UpdateProvider(ctx, uuidN(3), store.ProviderUpdate{Name: "p3", ParentUUID: &child, AllowReparent: true}); !errors.Is(err, store.ErrInvalid) || !strings.Contains(err.Error(), "loop") {
		t.Errorf("loop: %v", err)
	}
	none := ""
	if _, err := s.UpdateProvider(ctx, uuidN(0), store.ProviderUpdate{Name: "p0", ParentUUID: &none}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("un-parent without permission: %v", err)
	}
	if _, err := s.UpdateProvider(ctx, uuidN(0), store.ProviderUpdate{Name: "p2"}); !errors.Is(err, store.ErrDuplicate) {
		t.Errorf("duplicate name: %v", err)
	}
	check(s)
}

// BenchmarkListProviders lists 2000 providers with and without filters.
func BenchmarkListProviders(b *testing.B) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(b.TempDir(), "b.db"), Options{Migrate: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	for i := 0; i < 2000; i++ {
		u := "00000000-0000-4000-8000-" + strings.Repeat("0", 8) + string(rune('a'+i/676%26)) + string(rune('a'+i/26%26)) + string(rune('a'+i%26)) + "0"
		u = u[:36]
		if _, err := s.CreateProvider(ctx, store.NewProvider{UUID: u, Name: u}); err != nil {
			b.Fatal(err)
		}
	}
	for _, bc := range []struct {
		name string
		f    store.ProviderFilter
	}{
		{"all", store.ProviderFilter{}},
		{"resources", store.ProviderFilter{Resources: []store.ResourceAmount{{Class: "VCPU", Amount: 1}}}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := s.ListProviders(ctx, bc.f); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
