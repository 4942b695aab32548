package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// cmdPolicyList prints the effective policy rules (the api.release's
// defaults, the legacy deprecated alternatives and the operator file
// applied) as a policy file: one "name": "check" line per rule,
// registered rules first. With --placement-conf it starts from
// placement.conf's [oslo_policy], as serve does.
func cmdPolicyList(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("policy list", "placement-syncd policy list [--config FILE] [--placement-conf FILE]", stderr)
	var config, conf string
	fs.StringVar(&config, "config", "", "YAML configuration `file` (default: built-in defaults)")
	fs.StringVar(&conf, "placement-conf", "", "OpenStack Placement's placement.conf `file` to start from (the --config YAML overrides it)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg, err := policyListConfig(config, conf)
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

// policyListConfig is the configuration serve would run with: the YAML,
// over placement.conf when one is given.
func policyListConfig(yamlPath, confPath string) (Config, error) {
	if confPath == "" {
		return configure(yamlPath, nil)
	}
	pc, err := readPlacementConf(confPath)
	if err != nil {
		return Config{}, usageError{err}
	}
	cfg, _, err := overPlacementConf(pc, yamlPath, nil)
	if err != nil {
		return cfg, usageError{err}
	}
	return cfg, nil
}
