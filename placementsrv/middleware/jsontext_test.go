package middleware

import (
	"strings"
	"testing"
)

// TestParseJSONRefusesWhatUpstreamCannotStore: bytes that are not UTF-8
// get Python's codec message (the reference answers 400 "Malformed JSON:
// 'utf-8' codec can't decode byte 0xff in position 10: invalid start
// byte" for the first case), lone surrogate escapes and over-deep nesting
// are refused, and valid text (a surrogate pair, an escaped backslash
// before "ud800") still parses.
func TestParseJSONRefusesWhatUpstreamCannotStore(t *testing.T) {
	for _, tc := range []struct {
		body, want string
	}{
		{"{\"name\":\"x\xff\"}", "'utf-8' codec can't decode byte 0xff in position 10: invalid start byte"},
		{"\"\xe2\x28\xa1\"", "'utf-8' codec can't decode byte 0xe2 in position 1: invalid continuation byte"},
		{"\"\xf0\x9f\x98\"", "'utf-8' codec can't decode bytes in position 1-3: invalid continuation byte"},
		{"\"ab\xf0\x9f", "'utf-8' codec can't decode bytes in position 3-4: unexpected end of data"},
		{"\"\xed\xa0\x80\"", "'utf-8' codec can't decode byte 0xed in position 1: invalid continuation byte"},
		{`{"name":"\ud800"}`, `\ud800 at position 9 is a lone surrogate`},
		{`{"name":"a\udc00"}`, `\udc00 at position 10 is a lone surrogate`},
		{`{"name":"\uD83D\u0041"}`, `\uD83D at position 9 is a lone surrogate`},
		{`{"name":"\ud83d\ude00\ud800x"}`, `\ud800 at position 21 is a lone surrogate`},
		{`{"a":"\ud800"`, `Expecting ',' delimiter: line 1 column 14 (char 13)`}, // a syntax error comes first
		{strings.Repeat("[", 65) + strings.Repeat("]", 65), "nesting deeper than 64 levels at position 64"},
		{`{"name":"\ud83d\ude00 \\ud800 \u00e9"}`, ""},
		{`"[[[[` + strings.Repeat("{", 100) + `"`, ""},
		{strings.Repeat("[", 64) + strings.Repeat("]", 64), ""},
	} {
		_, err := ParseJSON([]byte(tc.body))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("ParseJSON(%.40q): %v, want no error", tc.body, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("ParseJSON(%.40q) = %v, want %q", tc.body, err, tc.want)
		}
	}
}
