package release

import "testing"

func TestParseRoundTrips(t *testing.T) {
	for _, n := range Names() {
		r, err := Parse(n)
		if err != nil {
			t.Fatalf("Parse(%q): %v", n, err)
		}
		if r.String() != n {
			t.Errorf("Parse(%q).String() = %q", n, r.String())
		}
	}
	if _, err := Parse("9.0.0"); err == nil {
		t.Error("Parse(9.0.0) accepted a release it does not know")
	}
	var zero Release
	if zero != Default || Default.String() != "15.0.0" {
		t.Errorf("the zero Release is %s, want the default 15.0.0", zero)
	}
	if s, n := V8.EnforceDefaults(); s || n {
		t.Error("8.0.0's oslo.policy enforces scope or new defaults by default")
	}
	if s, n := V15.EnforceDefaults(); !s || !n {
		t.Error("15.0.0's oslo.policy does not enforce scope and new defaults by default")
	}
}
