// Package golden checks a file generated from the code against the copy
// checked in, or writes it with -update, so that every generated text
// (the configuration reference, the metrics reference) is kept one way.
package golden

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Check compares want with the file at path, named name in messages;
// with update it writes want there instead. regenerate is the command
// the messages give.
func Check(t testing.TB, path, name string, want []byte, update bool, regenerate string) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", name)
		return
	}
	got, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("%s is missing: generate it with\n  %s", name, regenerate)
	}
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is out of date (%s): regenerate it with\n  %s", name, FirstDifference(got, want), regenerate)
	}
}

// FirstDifference names the first line where got and want differ.
func FirstDifference(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return fmt.Sprintf("line %d is %q, should be %q", i+1, g[i], w[i])
		}
	}
	return fmt.Sprintf("%d lines, should be %d", len(g), len(w))
}
