package removallimit

import "testing"

func TestParseAndAllowed(t *testing.T) {
	for in, want := range map[string]Limit{"10%": {N: 10, Percent: true}, "25": {N: 25}, " 0 ": {N: 0}} {
		if got, err := Parse(in); err != nil || got != want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "x", "ten", "-1", "101%", "150%", "%", "10.5%"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
	if got := (Limit{N: 10, Percent: true}).Allowed(148); got != 15 {
		t.Errorf("10%% of 148 = %d, want 15", got)
	}
	if got := (Limit{N: 10, Percent: true}).Allowed(3); got != 1 {
		t.Errorf("10%% of 3 = %d, want 1", got)
	}
	if got := (Limit{N: 7}).Allowed(3); got != 7 {
		t.Errorf("an absolute limit = %d, want 7", got)
	}
	if s := (Limit{N: 10, Percent: true}).String(); s != "10%" {
		t.Errorf("String = %q", s)
	}
}
