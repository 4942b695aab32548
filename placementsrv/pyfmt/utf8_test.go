package pyfmt

import (
	"encoding/base64"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// TestUTF8ErrorMatchesPython compares UTF8Error with Debian's Python
// decoding the same bytes as UTF-8.
func TestUTF8ErrorMatchesPython(t *testing.T) {
	cases := []string{"x\xff", "\xe2\x28\xa1", "\xf0\x9f\x98", "ab\xf0\x9f", "\xed\xa0\x80", "\xc0\xaf",
		"\xe0\x80\x80", "\xf4\x90\x80\x80", "\xf0\x90\x28", "é\x80", "\xc3", "ok \xe2\x82"}
	enc := make([]string, len(cases))
	for i, c := range cases {
		enc[i] = base64.StdEncoding.EncodeToString([]byte(c))
	}
	in, _ := json.Marshal(enc)
	script := `
import base64, json, sys
out = []
for c in json.load(sys.stdin):
    try:
        base64.b64decode(c).decode("utf-8")
        out.append("")
    except UnicodeDecodeError as e:
        out.append(str(e))
json.dump(out, sys.stdout)
`
	cmd := exec.Command("/usr/bin/python3", "-c", script)
	cmd.Stdin = strings.NewReader(string(in))
	outb, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	var want []string
	if err := json.Unmarshal(outb, &want); err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		got := ""
		if err := UTF8Error([]byte(c)); err != nil {
			got = err.Error()
		}
		if got != want[i] {
			t.Errorf("UTF8Error(%q) = %q, Python %q", c, got, want[i])
		}
	}
}
