package policy

import (
	"encoding/json"
	"errors"
	"os"
	"testing"
)

func TestParseTable(t *testing.T) {
	cases := []struct {
		rule, want string
	}{
		{"", "@"},
		{"@", "@"},
		{"!", "!"},
		{"role:admin", "role:admin"},
		{"rule:admin_api", "rule:admin_api"},
		{"project_id:%(project_id)s", "project_id:%(project_id)s"},
		{"role:admin or role:reader", "(role:admin or role:reader)"},
		{"role:admin and system_scope:all", "(role:admin and system_scope:all)"},
		{"a:1 or b:2 and c:3", "(a:1 or (b:2 and c:3))"},
		{"a:1 and b:2 or c:3 and d:4", "((a:1 and b:2) or (c:3 and d:4))"},
		{"a:1 or b:2 and c:3 and d:4", "(a:1 or (b:2 and c:3 and d:4))"},
		{"a:1 or b:2 or c:3", "(a:1 or b:2 or c:3)"},
		{"(a:1 or b:2) and c:3", "((a:1 or b:2) and c:3)"},
		{"not a:1 and b:2", "(not a:1 and b:2)"},
		{"a:1 and not b:2", "(a:1 and not b:2)"},
		{"not not a:1", "not not a:1"},
		{"not (a:1 or b:2)", "not (a:1 or b:2)"},
		{"((a:1))", "a:1"},
		{"A:1 AND b:2 Or NOT c:3", "((A:1 and b:2) or not c:3)"},
		{"  a:1\t\nand   b:2 ", "(a:1 and b:2)"},
		{"a:1 or (b:2 and c:3) and d:4", "(a:1 or (b:2 and c:3 and d:4))"},
		{"role:compute:admin", "role:compute:admin"},
		{"http://example.com/%(project_id)s", "http://example.com/%(project_id)s"},
	}
	for _, tc := range cases {
		t.Run(tc.rule, func(t *testing.T) {
			n, err := parseRule(tc.rule)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if got := n.String(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	for _, rule := range []string{
		"role:admin and", "and role:admin", "(role:admin", "role:admin)",
		"admin", "role:a role:b", "not", "()", "   ", "role:a 'quoted'",
		"role:a or or role:b", "'role:a'",
	} {
		t.Run(rule, func(t *testing.T) {
			if _, err := parseRule(rule); !errors.Is(err, ErrSyntax) {
				t.Errorf("parseRule(%q) = %v, want a syntax error", rule, err)
			}
		})
	}
}

// TestAgainstOsloPolicy replays cases generated from oslo.policy itself
// (testdata/gen_cases.py): the parsed tree's string form, and the result
// of evaluating it for several credentials and targets. Where upstream
// raises at evaluation (a 500 there), the check must deny here.
func TestAgainstOsloPolicy(t *testing.T) {
	data, err := os.ReadFile("testdata/cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Creds []struct {
			Roles          []string `json:"roles"`
			ProjectID      *string  `json:"project_id"`
			UserID         *string  `json:"user_id"`
			SystemScope    *string  `json:"system_scope"`
			DomainID       *string  `json:"domain_id"`
			IsAdminProject bool     `json:"is_admin_project"`
		} `json:"creds"`
		Targets []map[string]any `json:"targets"`
		Cases   []struct {
			Rule    string    `json:"rule"`
			Parsed  *string   `json:"parsed"`
			Results [][]*bool `json:"results"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	opt := func(p *string) Value {
		if p == nil {
			return None()
		}
		return Str(*p)
	}
	creds := make([]Credentials, len(doc.Creds))
	for i, c := range doc.Creds {
		creds[i] = Credentials{Roles: c.Roles, ProjectID: opt(c.ProjectID), UserID: opt(c.UserID),
			SystemScope: opt(c.SystemScope), DomainID: opt(c.DomainID), IsAdminProject: c.IsAdminProject}
	}
	targets := casesTargets(doc.Targets)
	for _, tc := range doc.Cases {
		n, err := parseRule(tc.Rule)
		if tc.Parsed == nil {
			if err == nil {
				t.Errorf("%q: parsed as %q, oslo.policy cannot parse it", tc.Rule, n.String())
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v; oslo.policy parses it as %q", tc.Rule, err, *tc.Parsed)
			continue
		}
		if got := n.String(); got != *tc.Parsed {
			t.Errorf("%q: parsed as %q, oslo.policy: %q", tc.Rule, got, *tc.Parsed)
			continue
		}
		for ci := range creds {
			for ti := range targets {
				want := tc.Results[ci][ti] != nil && *tc.Results[ci][ti]
				x := evalCtx{c: &creds[ci], t: &targets[ti]}
				if got := n.eval(&x) && !x.failed; got != want {
					t.Errorf("%q creds %d target %d: got %v, want %v", tc.Rule, ci, ti, got, want)
				}
			}
		}
	}
}

// casesTargets converts the targets of cases.json, but those with keys
// beyond project_id and user_id, which are not modelled.
func casesTargets(docTargets []map[string]any) []Target {
	var targets []Target
	for _, tm := range docTargets {
		if _, ok := tm["flag"]; ok {
			continue
		}
		var tg Target
		for k, v := range tm {
			val := None()
			if s, ok := v.(string); ok {
				val = Str(s)
			}
			switch k {
			case "project_id":
				tg.ProjectID = val
			case "user_id":
				tg.UserID = val
			}
		}
		targets = append(targets, tg)
	}
	return targets
}

func TestPyLiteral(t *testing.T) {
	cases := []struct {
		in, want string
		ok       bool
	}{
		{"True", "True", true}, {"None", "None", true}, {"20", "20", true},
		{"-3", "-3", true}, {"0x10", "16", true}, {"1.5", "1.5", true},
		{"1e5", "100000.0", true}, {"1e16", "1e+16", true}, {"'abc'", "abc", true},
		{`"x"`, "x", true}, {"project_id", "", false}, {"user.id", "", false},
		{"01", "", false}, {"1_000", "1000", true},
	}
	for _, tc := range cases {
		got, ok := pyLiteral(tc.in)
		if ok != tc.ok || got != tc.want {
			t.Errorf("pyLiteral(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// FuzzParse checks that any rule either parses to a tree whose printed
// form parses back to the same tree, or fails with ErrSyntax; and that
// evaluating a parsed rule never panics.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"role:admin and system_scope:all", "a:1 or (b:2 and not c:%(project_id)s)", "((", "not", "'x'", "@", "!"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rule string) {
		n, err := parseRule(rule)
		if err != nil {
			if !errors.Is(err, ErrSyntax) {
				t.Fatalf("error %v does not wrap ErrSyntax", err)
			}
			return
		}
		c := Credentials{Roles: []string{"admin"}, ProjectID: Str("p")}
		tg := DefaultTarget(&c)
		x := evalCtx{c: &c, t: &tg}
		_ = n.eval(&x)
		again, err := parseRule(n.String())
		if err != nil {
			// Printing can make a generic check's kind start with "(" or
			// a match end with ")", which re-tokenizes differently; only
			// well-formed kinds must round-trip.
			return
		}
		if again.String() != n.String() {
			t.Fatalf("%q printed as %q reparses as %q", rule, n.String(), again.String())
		}
	})
}
