package main

import (
	"path/filepath"
	"testing"
)

// TestDB_PlacementOwnDatabase: db version and db migrate, given OpenStack
// Placement's own database (8.0.0's or 15.0.0's schema, as db export
// writes it), say so, name the release, and give the import that copies
// it, --db included (exit 3); the database is not touched.
func TestDB_PlacementOwnDatabase(t *testing.T) {
	dir := t.TempDir()
	ours := filepath.Join(dir, "ours.db")
	if code, out := runCmd(t, "db", "migrate", "--db", ours); code != exitOK {
		t.Fatalf("db migrate: exit %d\n%s", code, out)
	}
	for _, rel := range []struct{ name, revision string }{{"8.0.0", "422ece571366"}, {"15.0.0", "a082b8bb98d0"}} {
		theirs := filepath.Join(dir, "placement-"+rel.name+".sqlite")
		if code, out := runCmd(t, "db", "export", "--to", "sqlite:///"+theirs, "--release", rel.name, "--db", ours); code != exitOK {
			t.Fatalf("db export --release %s: exit %d\n%s", rel.name, code, out)
		}
		sum := fileSum(t, theirs)
		want := "placement-syncd: database " + theirs + " is OpenStack Placement's own (alembic revision " + rel.revision + ", Placement " + rel.name +
			"'s schema), not one of placement-syncd's, and no migration makes it one: copy it into a database of ours (a new file, or an empty MySQL database) with " +
			"'placement-syncd db import --from sqlite:///" + theirs + " --db NEW-PATH-OR-URL', then serve that one\n"
		for _, sub := range []string{"version", "migrate"} {
			if code, out := runCmd(t, "db", sub, "--db", theirs); code != exitSchema || out != want {
				t.Errorf("db %s on Placement %s's database: exit %d\n%s\nwant exit %d and\n%s", sub, rel.name, code, out, exitSchema, want)
			}
		}
		if fileSum(t, theirs) != sum {
			t.Errorf("db version or db migrate changed Placement %s's database", rel.name)
		}
	}
}
