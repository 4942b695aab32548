package pyfmt

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"
	"unicode/utf8"
)

// jsonCases are bodies a client may send, right and wrong.
var jsonCases = []string{
	``, ` `, `{`, `}`, `{"name": }`, `{'name': 1}`, `{"name": "x",}`, `[1,]`, `[1 2]`, `{"a" 1}`,
	`{"a":1 "b":2}`, `"abc`, `"a\qb"`, `"\u12"`, `"\u12g4"`, `"\ud800\u12"`, `"\ud800\uzzzz"`,
	"\"a\tb\"", "{\n  \"a\": [1,\n 2,,]}", `01`, `-`, `-0`, `1.`, `1.e5`, `1e`, `1e+`, `1E-2x`, `.5`,
	`NaN`, `-Infinity`, `Infinity1`, `nul`, `true false`, `[] x`, `{"é": "ü", "x": }`, "\ufeff{}",
	`{"a": {"b": [1, {"c": nul}]}}`, `[[[[`, `"\/\b\f\n\r\t\"\\"`, `"\ud83d\ude00"`, `  1  `, `1 `,
	`{"a":1,`, `{"a":`, `{"a"`, `{"`, `[`, `["a",`, "[\"\x01\"]", `"` + "\u2028" + `"`,
	`{"inventories": {"VCPU": {"total": 8, "allocation_ratio": 1.5e}}}`, "\r\n{\r\n\"a\"\r\n}x",
}

// TestJSONErrorMatchesPython compares JSONError with Debian's Python
// json.loads on fixed cases and on random mutations of valid documents.
func TestJSONErrorMatchesPython(t *testing.T) {
	cases := append([]string(nil), jsonCases...)
	cases = append(cases, mutations(2000)...)
	want := pythonErrors(t, cases)
	mismatched := 0
	for i, c := range cases {
		got := ""
		if err := JSONError(c); err != nil {
			got = err.Error()
		}
		if got != want[i] {
			mismatched++
			if mismatched <= 20 {
				t.Errorf("JSONError(%q)\n got %q\nwant %q", c, got, want[i])
			}
		}
	}
	if mismatched > 0 {
		t.Errorf("%d of %d bodies worded differently from Python", mismatched, len(cases))
	}
}

// mutations cuts, duplicates and replaces characters of valid documents,
// with a fixed seed.
func mutations(n int) []string {
	seeds := []string{
		`{"name": "rp-1", "uuid": "7d8c5b02-3a4e-4a5c-9d0e-1f2a3b4c5d6e", "parent_provider_uuid": null}`,
		`{"inventories": {"VCPU": {"total": 8, "reserved": 0, "min_unit": 1, "allocation_ratio": 16.0}}, "resource_provider_generation": 3}`,
		`{"allocations": [{"resource_provider": {"uuid": "a"}, "resources": {"VCPU": 1, "MEMORY_MB": -1.5e3}}], "project_id": "p", "user_id": "u", "x": [true, false, null, "\u00e9\n"]}`,
	}
	alphabet := []rune(`{}[]",:. -+eE0123456789tfnulNaI\/` + "\t\n\x01éa")
	r := rand.New(rand.NewPCG(1, 2))
	out := make([]string, 0, n)
	for len(out) < n {
		s := []rune(seeds[r.IntN(len(seeds))])
		for k := 1 + r.IntN(3); k > 0; k-- {
			i := r.IntN(len(s))
			switch r.IntN(3) {
			case 0:
				s = append(s[:i:i], s[i+1:]...)
			case 1:
				s[i] = alphabet[r.IntN(len(alphabet))]
			default:
				s = s[:i]
			}
			if len(s) == 0 {
				break
			}
		}
		out = append(out, string(s))
	}
	return out
}

// pythonErrors runs json.loads over each case in one Debian python3.
func pythonErrors(t *testing.T, cases []string) []string {
	t.Helper()
	var in bytes.Buffer
	if err := json.NewEncoder(&in).Encode(cases); err != nil {
		t.Fatal(err)
	}
	script := `
import json, sys
out = []
for c in json.load(sys.stdin):
    try:
        json.loads(c)
        out.append("")
    except json.JSONDecodeError as e:
        out.append(str(e))
json.dump(out, sys.stdout)
`
	cmd := exec.Command("/usr/bin/python3", "-c", script)
	cmd.Stdin = &in
	var stderr strings.Builder
	cmd.Stderr = &stderr
	outb, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3 (Debian's, which the reference Placement runs on): %v\n%s", err, stderr.String())
	}
	var out []string
	if err := json.Unmarshal(outb, &out); err != nil || len(out) != len(cases) {
		t.Fatalf("python3 answer: %v (%d answers for %d cases)", err, len(out), len(cases))
	}
	return out
}

func TestJSONErrorNeedsUTF8(t *testing.T) {
	if err := JSONError("\xff"); err == nil || strings.Contains(err.Error(), "Expecting") {
		t.Fatalf("JSONError on bytes that are not UTF-8 = %v, want a usage error", err)
	}
	if !utf8.ValidString(fmt.Sprint(JSONError(`"é`))) {
		t.Fatal("message is not UTF-8")
	}
}
