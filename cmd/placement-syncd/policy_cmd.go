package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/assemble"
	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/config"
	"github.com/placement-syncd/placement-syncd/placementsrv/release"
)

// cmdPolicyList prints the effective policy rules (the api.release's
// defaults, the legacy deprecated alternatives and the operator file
// applied) as a policy file: one "name": "check" line per rule,
// registered rules first, after the policy file's findings, the ones
// 'serve' refuses to start on (policy.file_check). With
// --placement-conf it starts from placement.conf's [oslo_policy], as
// serve does; --release shows the rules of another release, e.g. before
// changing api.release.
func cmdPolicyList(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("policy list", "placement-syncd policy list [--config FILE] [--placement-conf FILE] [--release "+strings.Join(release.Names(), "|")+"]", stderr)
	common := registerConfig(fs, configSpec{noDB: true, placementConf: true, reportsPolicy: true})
	rel := fs.String("release", "", "Placement `release` whose rules to list, overriding api.release (one of "+strings.Join(release.Names(), ", ")+")")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	var overrides []config.Override
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "release" {
			v := *rel
			overrides = append(overrides, config.Override{Key: "api.release", Flag: "--release", Set: func(c *config.Config) { c.API.Release = v }})
		}
	})
	cfg, _, err := common.load(overrides...)
	if err != nil {
		return err
	}
	r := cfg.API.ReleaseValue()
	enf, err := assemble.NewEnforcer(cfg.Policy, r)
	if err != nil {
		return usageError{err}
	}
	scope, newDefaults := cfg.Policy.Enforcement(r)
	fmt.Fprintf(stdout, "# Effective policy: Placement %s defaults, enforce_scope=%t enforce_new_defaults=%t file=%q\n",
		r, scope, newDefaults, cfg.Policy.File)
	for _, f := range enf.Findings {
		fmt.Fprintf(stdout, "# warning: %s\n", f)
	}
	for _, rule := range enf.Rules() {
		name, _ := json.Marshal(rule.Name)
		check, _ := json.Marshal(rule.Check())
		note := rule.Source
		if !rule.Registered {
			note = "file only (not a Placement rule)"
		}
		if len(rule.ScopeTypes) > 0 {
			note += "; scope_types: " + strings.Join(rule.ScopeTypes, ", ")
		}
		fmt.Fprintf(stdout, "# %s\n%s: %s\n", note, name, check)
	}
	return nil
}
