package osloconf

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	src := `# placement.conf
[DEFAULT]
debug = True

[placement_database]
connection = sqlite:////var/lib/placement/placement.sqlite
; a comment
[cors]
allowed_origin: https://a.example,
    https://b.example
max-age = "600"
`
	f, err := Parse("p.conf", strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	want := []Value{
		{Section: "DEFAULT", Key: "debug", Text: "True", Line: 3},
		{Section: "placement_database", Key: "connection", Text: "sqlite:////var/lib/placement/placement.sqlite", Line: 6},
		{Section: "cors", Key: "allowed_origin", Text: "https://a.example,\nhttps://b.example", Line: 9},
		{Section: "cors", Key: "max_age", Text: "600", Line: 11},
	}
	if len(f.Values) != len(want) {
		t.Fatalf("got %+v", f.Values)
	}
	for i := range want {
		if f.Values[i] != want[i] {
			t.Errorf("value %d: got %+v, want %+v", i, f.Values[i], want[i])
		}
	}
	if got := List(f.Values[2]); len(got) != 2 || got[1] != "https://b.example" {
		t.Errorf("List: %q", got)
	}
	if err := f.Bad(f.Values[3], "too old"); err.Error() != "p.conf:11: [cors] max_age: too old" {
		t.Errorf("Bad: %v", err)
	}
}

func TestParseErrors(t *testing.T) {
	for src, want := range map[string]string{
		"key = v\n":                "p.conf:1: option before any [section]",
		"[api\n":                   "p.conf:1: invalid section header",
		"[api]\nauth_strategy\n":   "p.conf:2: [api]: want key = value",
		"\n  continued\n":          "p.conf:2: indented line continues no option",
		"[a]\nx = 1\n\n  orphan\n": "p.conf:4: indented line continues no option",
	} {
		_, err := Parse("p.conf", strings.NewReader(src))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", src, err, want)
		}
	}
}

func TestScalars(t *testing.T) {
	for text, want := range map[string]bool{"True": true, "yes": true, "1": true, "off": false, "FALSE": false} {
		if got, err := Bool(Value{Text: text}); err != nil || got != want {
			t.Errorf("Bool(%q) = %v, %v", text, got, err)
		}
	}
	if _, err := Bool(Value{Text: "maybe"}); err == nil {
		t.Error("Bool(maybe): no error")
	}
	if n, err := Int(Value{Text: "-1"}); err != nil || n != -1 {
		t.Errorf("Int(-1) = %d, %v", n, err)
	}
	if _, err := Int(Value{Text: "ten"}); err == nil {
		t.Error("Int(ten): no error")
	}
}

func TestLoadMissing(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "none.conf"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("got %v", err)
	}
}
