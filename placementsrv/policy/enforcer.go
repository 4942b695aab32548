package policy

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/placement-syncd/placement-syncd/placementsrv/release"
)

// Options configures an Enforcer, as oslo.policy's [oslo_policy] section.
type Options struct {
	// File is an operator policy file (YAML or JSON) whose rules override
	// the defaults; empty means none.
	File string
	// EnforceScope refuses a token whose scope is not among the rule's
	// scope types.
	EnforceScope bool
	// EnforceNewDefaults uses the secure-RBAC defaults alone; false ORs
	// each deprecated default in (legacy mode).
	EnforceNewDefaults bool
	// RemoteTimeout bounds http:/https: checks (default 10s).
	RemoteTimeout time.Duration
	// HTTPClient performs http:/https: checks; nil means a client with
	// RemoteTimeout.
	HTTPClient *http.Client
	// Release chooses the registered defaults: 15.0.0's project-scoped
	// admin and service rules (the zero value), or 8.0.0's system-scoped
	// ones.
	Release release.Release
}

// Rule is one effective rule.
type Rule struct {
	Name string
	// Source is "default", "default+deprecated" (legacy OR), or "file".
	Source     string
	ScopeTypes []string
	Registered bool
	check      *node
	// file and line locate a rule the policy file wrote (line 0: a
	// default's).
	file string
	line int
}

// Check is the effective check string, as oslo.policy prints it.
func (r *Rule) Check() string {
	return r.check.String()
}

// Enforcer holds the compiled rule set. It is immutable after New and
// safe for concurrent use.
type Enforcer struct {
	rules        map[string]*Rule
	order        []*Rule
	enforceScope bool
	// Findings are the policy file's entries that upstream would accept
	// (at most logging them) but that do not do what they say under this
	// release: see Finding.
	Findings []Finding
}

// Result of an enforcement.
type Result uint8

const (
	// Allowed: the rule passed.
	Allowed Result = iota
	// Denied: the rule's check failed.
	Denied
	// ScopeDenied: enforce_scope is on and the token's scope is not one of
	// the rule's scope types.
	ScopeDenied
	// Unregistered: no such registered rule (a programming error).
	Unregistered
)

// RuleError is a policy file problem, naming the rule.
type RuleError struct {
	File string
	Rule string
	Err  error
}

func (e *RuleError) Error() string {
	if e.Rule == "" {
		return fmt.Sprintf("policy file %s: %v", e.File, e.Err)
	}
	return fmt.Sprintf("policy file %s: rule %q: %v", e.File, e.Rule, e.Err)
}

func (e *RuleError) Unwrap() error { return e.Err }

// New loads the defaults and the operator file and compiles them, as
// oslo.policy's load_rules: a file rule replaces the default of the same
// name; otherwise a default with a deprecated rule becomes "new or old"
// unless EnforceNewDefaults, and a file override of the deprecated name
// stands in for the default.
func New(opts Options) (*Enforcer, error) {
	var file []fileRule
	if opts.File != "" {
		data, err := os.ReadFile(opts.File)
		if err != nil {
			return nil, fmt.Errorf("read policy file: %w", err)
		}
		if file, err = parseFile(opts.File, data); err != nil {
			return nil, err
		}
	}
	return build(Defaults(opts.Release), file, opts)
}

// NewFromBytes is New with the policy file's contents given directly;
// name is used in errors.
func NewFromBytes(name string, data []byte, opts Options) (*Enforcer, error) {
	file, err := parseFile(name, data)
	if err != nil {
		return nil, err
	}
	opts.File = name
	return build(Defaults(opts.Release), file, opts)
}

func build(defaults []Default, file []fileRule, opts Options) (*Enforcer, error) {
	e := &Enforcer{rules: map[string]*Rule{}, enforceScope: opts.EnforceScope}
	fileByName := map[string]*fileRule{}
	for i := range file {
		fr := &file[i]
		fileByName[fr.name] = fr
		r := &Rule{Name: fr.name, Source: "file", check: fr.check, file: opts.File, line: fr.line}
		e.rules[fr.name] = r
		e.order = append(e.order, r)
	}
	for _, d := range defaults {
		check, err := parseRule(d.Check)
		if err != nil {
			return nil, fmt.Errorf("default rule %q: %w", d.Name, err)
		}
		if r, ok := e.rules[d.Name]; ok {
			r.Registered, r.ScopeTypes = true, d.ScopeTypes
			continue
		}
		r := &Rule{Name: d.Name, Source: "default", ScopeTypes: d.ScopeTypes, Registered: true, check: check}
		if d.DeprecatedName != "" {
			old, err := parseRule(d.DeprecatedCheck)
			if err != nil {
				return nil, fmt.Errorf("deprecated rule %q: %w", d.DeprecatedName, err)
			}
			if fr, ok := fileByName[d.DeprecatedName]; ok && d.DeprecatedName != d.Name && fr.check.String() != "rule:"+d.Name {
				// The operator overrode the old name: keep their check.
				r.check, r.Source, r.file, r.line = fr.check, "file", opts.File, fr.line
			} else if !opts.EnforceNewDefaults && d.DeprecatedCheck != d.Check {
				r.check, r.Source = &node{op: opOr, kids: []*node{check, old}}, "default+deprecated"
			}
		}
		e.rules[d.Name] = r
		e.order = append(e.order, r)
	}
	remote := newRemoteChecker(opts)
	if err := e.link(remote, opts.Release); err != nil {
		return nil, err
	}
	e.Findings = append(e.Findings, otherReleaseNames(file, opts)...)
	slices.SortStableFunc(e.Findings, func(a, b Finding) int { return a.Line - b.Line })
	// Registered rules first, in registration order, then file-only ones.
	order := make([]*Rule, 0, len(e.order))
	for _, d := range defaults {
		order = append(order, e.rules[d.Name])
	}
	for _, r := range e.order {
		if !r.Registered {
			order = append(order, r)
		}
	}
	e.order = order
	return e, nil
}

// link resolves rule: references (a missing rule falls back to the rule
// named "default" when there is one, as oslo.policy's default_rule, and
// is a Finding), wires remote checks, and rejects reference cycles, which
// upstream would only discover as a crash at request time.
func (e *Enforcer) link(remote *remoteChecker, rel release.Release) error {
	fallback := e.rules["default"]
	for _, r := range e.order {
		walk(r.check, func(n *node) {
			switch n.op {
			case opRule:
				if ref, ok := e.rules[n.match]; ok {
					n.ref = ref
				} else {
					n.ref = fallback
					e.Findings = append(e.Findings, undefinedRef(r, n.match, rel))
				}
			case opHTTP:
				n.remote = remote
			}
		})
	}
	var cyclic []string
	state := map[*Rule]uint8{}
	for _, r := range e.order {
		if reachesCycle(r, state) {
			cyclic = append(cyclic, r.Name)
		}
	}
	if len(cyclic) > 0 {
		return fmt.Errorf("policy rules %s are part of a cyclical reference", quoteAll(cyclic))
	}
	return nil
}

// Cycle search states of a rule.
const (
	unvisited uint8 = iota
	visiting
	acyclic
	cyclic
)

// reachesCycle reports whether following rule references from r ever
// comes back to a rule on the current path (memoized per rule).
func reachesCycle(r *Rule, state map[*Rule]uint8) bool {
	switch state[r] {
	case visiting, cyclic:
		return true
	case acyclic:
		return false
	}
	state[r] = visiting
	found := false
	walk(r.check, func(n *node) {
		if n.op == opRule && n.ref != nil && !found && reachesCycle(n.ref, state) {
			found = true
		}
	})
	if found {
		state[r] = cyclic
	} else {
		state[r] = acyclic
	}
	return found
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

func walk(n *node, fn func(*node)) {
	fn(n)
	for _, k := range n.kids {
		walk(k, fn)
	}
}

// Enforce checks the named registered rule for creds against target, as
// oslo.policy's authorize: scope first (only the rule itself, never the
// rules it refers to), then the check.
func (e *Enforcer) Enforce(rule string, creds *Credentials, target *Target) Result {
	r, ok := e.rules[rule]
	if !ok || !r.Registered {
		return Unregistered
	}
	if e.enforceScope && len(r.ScopeTypes) > 0 && !slices.Contains(r.ScopeTypes, creds.Scope()) {
		return ScopeDenied
	}
	x := evalCtx{c: creds, t: target, rule: rule}
	if r.check.eval(&x) && !x.failed {
		return Allowed
	}
	return Denied
}

// Rules lists the effective rules: the registered ones in registration
// order, then rules only the policy file defines.
func (e *Enforcer) Rules() []*Rule { return slices.Clone(e.order) }

// lookup returns the effective rule by name.
func (e *Enforcer) lookup(name string) (*Rule, bool) {
	r, ok := e.rules[name]
	return r, ok
}

var errNotMapping = errors.New("the top level must be a mapping of rule names to rules")
