package policy

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/release"
)

// oracle is a golden file of testdata/gen_enforce.py: oslo.policy's own
// decisions with one Placement release's registered rules.
type oracle struct {
	Creds map[string]struct {
		Roles       []string `json:"roles"`
		ProjectID   *string  `json:"project_id"`
		UserID      *string  `json:"user_id"`
		SystemScope *string  `json:"system_scope"`
		DomainID    *string  `json:"domain_id"`
	} `json:"creds"`
	// Rules are the registered rules, in registration order.
	Rules []struct {
		Name, Check, Description string
		ScopeTypes               []string `json:"scope_types"`
		Deprecated               []string `json:"deprecated"`
	} `json:"rules"`
	Modes []struct {
		Scope, New bool
		File       string
		// Results: rule -> caller -> one letter per target (own, p1).
		Results map[string]map[string]string
	} `json:"modes"`
}

func readOracle(t *testing.T, path string) *oracle {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc oracle
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &doc
}

type golden struct {
	file string
	rel  release.Release
}

// goldens are the oslo.policy decisions per release.
func goldens() []golden {
	return []golden{{"testdata/enforce.json", release.V8}, {"testdata/enforce15.json", release.V15}}
}

// TestDefaultsAsRegistered compares each release's defaults with the rules
// its Placement registers: names and order, check strings, descriptions,
// scope types and deprecated rules.
func TestDefaultsAsRegistered(t *testing.T) {
	for _, g := range goldens() {
		doc := readOracle(t, g.file)
		// placement-syncd's own rules come after Placement's.
		defs := slices.DeleteFunc(Defaults(g.rel), func(d Default) bool { return d.Name == Explain || d.Name == Capacity })
		if len(defs) != len(doc.Rules) {
			t.Errorf("%s: %d defaults, upstream registers %d", g.rel, len(defs), len(doc.Rules))
			continue
		}
		for i, want := range doc.Rules {
			d := defs[i]
			var dep []string
			if d.DeprecatedName != "" {
				dep = []string{d.DeprecatedName, d.DeprecatedCheck}
			}
			if d.Name != want.Name || d.Check != want.Check || d.Description != want.Description ||
				!slices.Equal(d.ScopeTypes, want.ScopeTypes) || !slices.Equal(dep, want.Deprecated) {
				t.Errorf("%s rule %d: got %+v, upstream %+v", g.rel, i, d, want)
			}
		}
	}
}

// TestEnforceAgainstOsloPolicy replays decisions oslo.policy itself made
// with each release's registered rules (testdata/gen_enforce.py): every
// rule, for several callers and targets, in all four modes, with no
// policy file and with testdata/every-form.yaml, which uses every form of
// rule OpenStack Placement accepts. The file must load unchanged.
func TestEnforceAgainstOsloPolicy(t *testing.T) {
	for _, g := range goldens() {
		t.Run(g.rel.String(), func(t *testing.T) {
			if n := replayOracle(t, readOracle(t, g.file), g.rel); n < 1000 {
				t.Errorf("only %d cases", n)
			}
		})
	}
}

// replayOracle checks every decision of doc under rel and returns how
// many there were.
func replayOracle(t *testing.T, doc *oracle, rel release.Release) int {
	opt := func(p *string) Value {
		if p == nil {
			return None()
		}
		return Str(*p)
	}
	letter := map[Result]byte{Allowed: 'a', Denied: 'd', ScopeDenied: 's', Unregistered: 'u'}
	n := 0
	for _, m := range doc.Modes {
		opts := Options{EnforceScope: m.Scope, EnforceNewDefaults: m.New, Release: rel}
		if m.File != "" {
			opts.File = filepath.Join("testdata", m.File)
		}
		enf, err := New(opts)
		if err != nil {
			t.Fatalf("New(%+v): %v", opts, err)
		}
		for rule, row := range m.Results {
			for who, want := range row {
				c := doc.Creds[who]
				creds := Credentials{Roles: c.Roles, ProjectID: opt(c.ProjectID), UserID: opt(c.UserID),
					SystemScope: opt(c.SystemScope), DomainID: opt(c.DomainID), IsAdminProject: true}
				own := DefaultTarget(&creds)
				p1 := Target{ProjectID: Str("p1")}
				got := string([]byte{letter[enf.Enforce(rule, &creds, &own)], letter[enf.Enforce(rule, &creds, &p1)]})
				if got != want {
					t.Errorf("scope=%v new=%v file=%q %s for %s (own, p1): got %s, oslo.policy: %s",
						m.Scope, m.New, m.File, rule, who, got, want)
				}
				n++
			}
		}
	}
	return n
}

func TestEnforceUnregistered(t *testing.T) {
	enf, err := NewFromBytes("p.yaml", []byte(`extra: "@"`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := Credentials{Roles: []string{"admin"}}
	tg := DefaultTarget(&c)
	for _, rule := range []string{"extra", "placement:nope"} {
		if got := enf.Enforce(rule, &c, &tg); got != Unregistered {
			t.Errorf("%s: got %v, want Unregistered", rule, got)
		}
	}
}

func TestPolicyFileErrors(t *testing.T) {
	cases := []struct {
		name, file, want string
	}{
		{"syntax", `"placement:resource_providers:list": "role:admin and"`, `rule "placement:resource_providers:list": line 1: policy rule syntax error`},
		{"no colon", "a: \"role:admin\"\nplacement:traits:list: admin\n", `rule "placement:traits:list": line 2: policy rule syntax error: check "admin"`},
		{"unbalanced", `{"placement:usages": "(role:admin or role:reader"}`, `rule "placement:usages"`},
		{"number", `"placement:usages": 5`, `rule "placement:usages": line 1: policy rule syntax error: 5 is not a rule`},
		{"bool", `"placement:usages": false`, `rule "placement:usages"`},
		{"mapping", "placement:usages:\n  a: b\n", `rule "placement:usages": line 2: a rule must be a string`},
		{"list element", `"placement:usages": [[1]]`, `rule "placement:usages"`},
		{"top level", `["role:admin"]`, `the top level must be a mapping`},
		{"yaml", "a: [\n", `policy file p.yaml: yaml:`},
		{"cycle", "a: \"rule:b\"\nb: \"rule:a\"\nc: \"rule:a\"\nd: \"@\"\n", `policy rules "a", "b", "c" are part of a cyclical reference`},
		{"self", `"placement:usages": "rule:placement:usages"`, `"placement:usages" are part of a cyclical reference`},
		{"default cycle", "default: \"rule:nope\"\n", `"default" are part of a cyclical reference`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewFromBytes("p.yaml", []byte(tc.file), Options{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestPolicyFileMissing(t *testing.T) {
	_, err := New(Options{File: filepath.Join(t.TempDir(), "absent.yaml")})
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("got %v, want not-exist", err)
	}
}

func TestPolicyFileForms(t *testing.T) {
	// JSON, an empty file, and undefined references that fall back to the
	// rule named "default", as oslo.policy's default_rule, in legacy mode
	// under either release's rules.
	cases := []struct {
		name, file, rule string
		roles            []string
		want             Result
	}{
		{"json", `{"placement:traits:list": "role:x"}`, TraitList, []string{"x"}, Allowed},
		{"empty", ``, TraitList, []string{"admin"}, Allowed},
		{"comments only", "# nothing\n", TraitList, []string{"reader"}, Denied},
		{"default fallback", "default: \"role:y\"\nplacement:traits:list: \"rule:nope\"\n", TraitList, []string{"y"}, Allowed},
		{"no default", "placement:traits:list: \"rule:nope\"\n", TraitList, []string{"admin"}, Denied},
		{"duplicate key last wins", "{\"placement:traits:list\": \"!\", \"placement:traits:list\": \"@\"}", TraitList, nil, Allowed},
		{"deprecated name override", "\"rule:admin_api\": \"role:op\"\n", RPList, []string{"op"}, Allowed},
		{"deprecated name override not for admin", "\"rule:admin_api\": \"role:op\"\n", RPList, []string{"admin"}, Denied},
	}
	for _, rel := range []release.Release{release.V8, release.V15} {
		for _, tc := range cases {
			t.Run(rel.String()+" "+tc.name, func(t *testing.T) {
				enf, err := NewFromBytes("p", []byte(tc.file), Options{Release: rel})
				if err != nil {
					t.Fatal(err)
				}
				c := Credentials{Roles: tc.roles, ProjectID: Str("p")}
				tg := DefaultTarget(&c)
				if got := enf.Enforce(tc.rule, &c, &tg); got != tc.want {
					t.Errorf("got %v, want %v", got, tc.want)
				}
			})
		}
	}
}

func TestRulesListing(t *testing.T) {
	enf, err := NewFromBytes("p", []byte("extra: \"role:a\"\nplacement:usages: \"@\"\n"), Options{EnforceNewDefaults: true, Release: release.V8})
	if err != nil {
		t.Fatal(err)
	}
	rules := enf.Rules()
	if len(rules) != len(Defaults(release.V8))+1 {
		t.Fatalf("%d rules, want %d", len(rules), len(Defaults(release.V8))+1)
	}
	if rules[0].Name != AdminAPI || rules[len(rules)-1].Name != "extra" || rules[len(rules)-1].Registered {
		t.Errorf("order: first %s, last %s", rules[0].Name, rules[len(rules)-1].Name)
	}
	r, _ := enf.lookup(SystemReaderAPI)
	if r.Check() != "(role:reader and system_scope:all)" || r.Source != "default" {
		t.Errorf("system_reader_api = %q (%s)", r.Check(), r.Source)
	}
	r, _ = enf.lookup(TotalUsages)
	if r.Check() != "@" || r.Source != "file" || len(r.ScopeTypes) != 2 {
		t.Errorf("usages = %q (%s) %v", r.Check(), r.Source, r.ScopeTypes)
	}
}

// TestRulesListing15: 15.0.0's base rules with and without the legacy
// alternative, and the reader rule that has no scope types.
func TestRulesListing15(t *testing.T) {
	for _, tc := range []struct {
		newDefaults   bool
		check, source string
	}{
		{true, "(role:admin or role:service)", "default"},
		{false, "((role:admin or role:service) or role:admin)", "default+deprecated"},
	} {
		enf, err := New(Options{EnforceNewDefaults: tc.newDefaults})
		if err != nil {
			t.Fatal(err)
		}
		if n := len(enf.Rules()); n != len(Defaults(release.V15)) {
			t.Errorf("%d rules, want %d", n, len(Defaults(release.V15)))
		}
		r, _ := enf.lookup(AdminOrServiceAPI)
		if r.Check() != tc.check || r.Source != tc.source || !slices.Equal(r.ScopeTypes, []string{"project"}) {
			t.Errorf("new defaults %v: admin_or_service_api = %q (%s) %v", tc.newDefaults, r.Check(), r.Source, r.ScopeTypes)
		}
		if r, _ := enf.lookup(ProjectReaderAPI); r.ScopeTypes != nil {
			t.Errorf("project_reader_api has scope types %v", r.ScopeTypes)
		}
		if _, ok := enf.lookup(SystemReaderAPI); ok {
			t.Error("15.0.0 has 8.0.0's system_reader_api")
		}
	}
}

// BenchmarkEnforce measures the per-request cost of the busiest rules.
func BenchmarkEnforce(b *testing.B) {
	enf, err := New(Options{EnforceScope: true, EnforceNewDefaults: true, Release: release.V8})
	if err != nil {
		b.Fatal(err)
	}
	c := Credentials{Roles: []string{"admin", "member", "reader"}, SystemScope: Str("all"), UserID: Str("u")}
	b.ReportAllocs()
	for b.Loop() {
		tg := DefaultTarget(&c)
		if enf.Enforce(CandidatesList, &c, &tg) != Allowed || enf.Enforce(AllocUpdate, &c, &tg) != Allowed {
			b.Fatal("denied")
		}
	}
}

func TestEnforceDoesNotAllocate(t *testing.T) {
	enf, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := Credentials{Roles: []string{"reader"}, ProjectID: Str("p"), UserID: Str("u")}
	allocs := testing.AllocsPerRun(100, func() {
		tg := DefaultTarget(&c)
		enf.Enforce(TotalUsages, &c, &tg)
		enf.Enforce(AllocUpdate, &c, &tg)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per enforcement, want 0", allocs)
	}
}
