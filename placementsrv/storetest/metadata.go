package storetest

import (
	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// testMetadata: a fact about the database is absent until set, replaced
// by a later set, kept across reopen, and neither a record nor part of a
// record transaction (a rolled-back Begin leaves it as it was).
func testMetadata(t *testing.T, s Storage) {
	e := openLedger(t, s)
	get := func(name string) (string, bool) {
		t.Helper()
		v, ok, err := e.l.Metadata(e.ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		return v, ok
	}
	set := func(name, value string) {
		t.Helper()
		if err := e.l.SetMetadata(e.ctx, name, value); err != nil {
			t.Fatal(err)
		}
	}
	if v, ok := get(store.MetaServedRelease); ok {
		t.Fatalf("new storage has %s = %q", store.MetaServedRelease, v)
	}
	before := e.records()
	set(store.MetaServedRelease, "8.0.0")
	set("another", "x")
	set(store.MetaServedRelease, "15.0.0")
	tx, err := e.be.Begin(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	e.reopen()
	if v, ok := get(store.MetaServedRelease); !ok || v != "15.0.0" {
		t.Errorf("after reopen %s = %q, %v; want 15.0.0", store.MetaServedRelease, v, ok)
	}
	if v, ok := get("another"); !ok || v != "x" {
		t.Errorf("after reopen another = %q, %v; want x", v, ok)
	}
	if after := e.records(); len(after.Traits) != len(before.Traits) || len(after.ResourceClasses) != len(before.ResourceClasses) ||
		len(after.Providers) != 0 {
		t.Errorf("metadata changed the records: %d traits, %d classes, %d providers; had %d, %d, 0",
			len(after.Traits), len(after.ResourceClasses), len(after.Providers), len(before.Traits), len(before.ResourceClasses))
	}
}
