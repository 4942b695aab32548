package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

// TestWrite replaces a file whole, makes a missing directory, leaves no
// temporary file behind, and fails without touching the old content when
// the directory cannot be written.
func TestWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "state.json")
	for _, content := range []string{`{"a":1}`, `{"b":2}`} {
		if err := Write(path, []byte(content)); err != nil {
			t.Fatal(err)
		}
		if got, err := os.ReadFile(path); err != nil || string(got) != content {
			t.Fatalf("read back %q, %v; want %q", got, err, content)
		}
	}
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil || len(entries) != 1 {
		t.Fatalf("directory holds %v (%v), want only the file", entries, err)
	}
	if err := Write(filepath.Join(path, "below-a-file"), []byte("x")); err == nil {
		t.Fatal("a write below a regular file succeeded")
	}
	if got, _ := os.ReadFile(path); string(got) != `{"b":2}` {
		t.Fatalf("a failed write changed the file to %q", got)
	}
}
