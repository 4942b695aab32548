package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// cmdPolicyList prints the effective policy rules (defaults, the legacy
// deprecated alternatives and the operator file applied) as a policy
// file: one "name": "check" line per rule, registered rules first.
func cmdPolicyList(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("policy list", "placement-syncd policy list [--config FILE]", stderr)
	var config string
	fs.StringVar(&config, "config", "", "YAML configuration `file` (default: built-in defaults)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg, err := configure(config, nil)
	if err != nil {
		return err
	}
	rel := apiRelease(cfg.API)
	enf, err := newEnforcer(cfg.Policy, rel)
	if err != nil {
		return usageError{err}
	}
	scope, newDefaults := cfg.Policy.enforcement(rel)
	fmt.Fprintf(stdout, "# Effective policy: Placement %s defaults, enforce_scope=%t enforce_new_defaults=%t file=%q\n",
		rel, scope, newDefaults, cfg.Policy.File)
	for _, w := range enf.Warnings {
		fmt.Fprintf(stdout, "# warning: %s\n", w)
	}
	for _, r := range enf.Rules() {
		name, _ := json.Marshal(r.Name)
		check, _ := json.Marshal(r.Check())
		note := r.Source
		if !r.Registered {
			note = "file only (not a Placement rule)"
		}
		if len(r.ScopeTypes) > 0 {
			note += "; scope_types: " + strings.Join(r.ScopeTypes, ", ")
		}
		fmt.Fprintf(stdout, "# %s\n%s: %s\n", note, name, check)
	}
	return nil
}
