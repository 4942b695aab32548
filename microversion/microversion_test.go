package microversion

import (
	"errors"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Version
	}{
		{"1.0", Version{1, 0}},
		{"1.39", Version{1, 39}},
		{"1.040", Version{1, 40}},
		{"2.5", Version{2, 5}},
	} {
		if got, err := Parse(tc.in); err != nil || got != tc.want {
			t.Errorf("Parse(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	// Parse is strict: what a header may carry loosely is the server's
	// negotiation's business, not this parser's.
	for _, in := range []string{"", "1", "1.", ".1", "a.b", "1.x", " 1.39", "1.39 ", "+1.39", "1.+39", "-1.5", "1.-1", "1.5.1", "latest"} {
		if v, err := Parse(in); !errors.Is(err, ErrMalformed) {
			t.Errorf("Parse(%q) = %v, %v; want ErrMalformed", in, v, err)
		}
	}
}

func TestCompare(t *testing.T) {
	a, b := Version{1, 9}, Version{1, 10}
	if !a.Less(b) || b.Less(a) || a.Less(a) {
		t.Errorf("Less is not numeric: 1.9 < 1.10 = %v, 1.10 < 1.9 = %v", a.Less(b), b.Less(a))
	}
	if !b.AtLeast(a) || a.AtLeast(b) || !a.AtLeast(a) {
		t.Errorf("AtLeast is not the converse of Less")
	}
	if !(Version{1, 99}).Less(Version{2, 0}) {
		t.Errorf("the major version does not come first")
	}
	if got := (Version{1, 26}).String(); got != "1.26" {
		t.Errorf("String() = %q", got)
	}
}

// The range is Placement 8.0.0's: 1.0 to 1.39, what the server answers
// "latest" with and what the client and tools default to.
func TestRange(t *testing.T) {
	if Min != (Version{1, 0}) || Max != (Version{1, 39}) {
		t.Fatalf("range %s to %s, want 1.0 to 1.39", Min, Max)
	}
	for _, v := range []Version{Min, ReservedEqualTotal, Max} {
		if !v.Supported() {
			t.Errorf("%s not supported", v)
		}
	}
	for _, v := range []Version{{0, 9}, {1, 40}, {2, 0}} {
		if v.Supported() {
			t.Errorf("%s supported", v)
		}
	}
}
