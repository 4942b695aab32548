package pyfmt

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// TestIntAndReprMatchPython compares Int's errors and values, and Repr,
// with Debian's Python on header-like text (read as Latin-1).
func TestIntAndReprMatchPython(t *testing.T) {
	raw := []string{"LATEST", "latest", "1", "25'", `a'b"c`, "", " 7 ", "+3", "-0", "1_000", "1__0", "_1", "1_",
		"\xe9", "\x01", "12345678901234567890123", "\xa0 4\x85", "\t\n", "٣", "1.2", "\\", "é'"}
	texts := make([]string, len(raw))
	for i, r := range raw {
		texts[i] = Latin1(r)
	}
	in, _ := json.Marshal(texts)
	script := `
import json, sys
out = []
for s in json.load(sys.stdin):
    try:
        out.append([str(int(s)), repr(s)])
    except ValueError as e:
        out.append(["error: " + str(e), repr(s)])
json.dump(out, sys.stdout)
`
	cmd := exec.Command("/usr/bin/python3", "-c", script)
	cmd.Stdin = strings.NewReader(string(in))
	outb, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	var want [][2]string
	if err := json.Unmarshal(outb, &want); err != nil {
		t.Fatal(err)
	}
	for i, s := range texts {
		got := ""
		if n, err := Int(s); err != nil {
			got = "error: " + err.Error()
		} else {
			got = n.String()
		}
		if got != want[i][0] {
			t.Errorf("Int(%q) = %q, Python %q", s, got, want[i][0])
		}
		if r := Repr(s); r != want[i][1] {
			t.Errorf("Repr(%q) = %q, Python %q", s, r, want[i][1])
		}
	}
}
