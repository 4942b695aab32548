package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"gopkg.in/yaml.v3"

	"github.com/placement-syncd/placement-syncd/internal/dburl"
	"github.com/placement-syncd/placement-syncd/internal/osloconf"
)

// setConnection maps [placement_database] connection: an SQLite URL is
// our database file; a MySQL one is parsed and kept as the reason this
// build cannot start on it.
func setConnection(pc *placementConf, f *osloconf.File, v osloconf.Value) error {
	u, err := dburl.Parse(v.Text)
	if err != nil {
		return err
	}
	if u.Driver == dburl.SQLite {
		pc.cfg.Database.Path = u.Path
		return nil
	}
	pc.mysql = f.Bad(v, "%s is a MySQL database, and this build serves SQLite only: "+
		"copy it with 'placement-syncd db import --from URL' and set database.path in the --config YAML (or --db)", u)
	return nil
}

// setAuthType accepts the one keystoneauth plugin we speak.
func setAuthType(_ *placementConf, _ *osloconf.File, v osloconf.Value) error {
	if v.Text != "password" && v.Text != "v3password" {
		return fmt.Errorf("unsupported auth_type %q (password only)", v.Text)
	}
	return nil
}

// setPolicyFile resolves a relative policy file as oslo.config does: in
// the directory of the file that names it.
func setPolicyFile(pc *placementConf, f *osloconf.File, v osloconf.Value) error {
	p := v.Text
	if !filepath.IsAbs(p) {
		p = filepath.Join(filepath.Dir(f.Path), p)
	}
	if _, err := os.Stat(p); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil // oslo.policy runs on its defaults when the file is absent
		}
		return err
	}
	pc.cfg.Policy.File = p
	return nil
}

func setMaxCandidates(pc *placementConf, _ *osloconf.File, v osloconf.Value) error {
	n, err := osloconf.Int(v)
	switch {
	case err != nil:
		return err
	case n == -1:
		n = 0 // upstream's "no limit"
	case n < 1:
		return fmt.Errorf("must be -1 (no limit) or at least 1, got %d", n)
	}
	pc.cfg.API.AllocationCandidates.MaxCandidates = n
	return nil
}

// setStrategy maps upstream's generation strategies onto our orders.
func setStrategy(pc *placementConf, _ *osloconf.File, v osloconf.Value) error {
	switch v.Text {
	case "depth-first":
		pc.cfg.API.AllocationCandidates.Order = "depth-first"
	case "breadth-first":
		pc.cfg.API.AllocationCandidates.Order = "round-robin"
	default:
		return fmt.Errorf("invalid value %q (depth-first or breadth-first)", v.Text)
	}
	return nil
}

func setDebug(pc *placementConf, _ *osloconf.File, v osloconf.Value) error {
	b, err := osloconf.Bool(v)
	if b {
		pc.cfg.Log.Level = "debug"
	}
	return err
}

// yamlSetsKey reports whether the YAML file at path sets section.key, so
// that our YAML's database.path overrides a MySQL connection.
func yamlSetsKey(path, section, key string) bool {
	if path == "" {
		return false
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	var doc map[string]map[string]any
	if yaml.Unmarshal(data, &doc) != nil {
		return false
	}
	_, ok := doc[section][key]
	return ok
}
