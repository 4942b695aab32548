package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/assemble"
)

// cmdPolicyList prints the effective policy rules (the api.release's
// defaults, the legacy deprecated alternatives and the operator file
// applied) as a policy file: one "name": "check" line per rule,
// registered rules first. With --placement-conf it starts from
// placement.conf's [oslo_policy], as serve does.
func cmdPolicyList(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("policy list", "placement-syncd policy list [--config FILE] [--placement-conf FILE]", stderr)
	common := registerConfig(fs, configSpec{noDB: true, placementConf: true})
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg, _, err := common.load()
	if err != nil {
		return err
	}
	rel := cfg.API.ReleaseValue()
	enf, err := assemble.NewEnforcer(cfg.Policy, rel)
	if err != nil {
		return usageError{err}
	}
	scope, newDefaults := cfg.Policy.Enforcement(rel)
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
