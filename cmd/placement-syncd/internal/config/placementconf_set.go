package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"gopkg.in/yaml.v3"

	"github.com/placement-syncd/placement-syncd/internal/dburl"
	"github.com/placement-syncd/placement-syncd/internal/osloconf"
	"github.com/placement-syncd/placement-syncd/placementsrv/dbstore"
)

// setConnection maps [placement_database] connection onto our database:
// an SQLite URL is database.path, a MySQL one database.connection. Where
// it was read is kept for the refusal of Placement's own database.
func setConnection(pc *placementConf, f *osloconf.File, v osloconf.Value) error {
	u, err := dburl.Parse(v.Text)
	if err != nil {
		return err
	}
	pc.Database = &ConfDatabase{URL: u, file: f, value: v}
	if file := dbstore.File(u); file != "" {
		pc.cfg.Database.Path = file
		return nil
	}
	pc.cfg.Database.Connection = v.Text
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

// setMaxCandidates follows Placement 15.0.0, which stops generating once
// it holds at least that many candidates: any negative value means no cap,
// and 0 still lets the first candidate through.
func setMaxCandidates(pc *placementConf, _ *osloconf.File, v osloconf.Value) error {
	n, err := osloconf.Int(v)
	if err != nil {
		return err
	}
	switch {
	case n < 0:
		n = 0
	case n == 0:
		n = 1
	}
	pc.cfg.API.AllocationCandidates.MaxCandidates = n
	return nil
}

func setStrategy(pc *placementConf, _ *osloconf.File, v osloconf.Value) error {
	switch v.Text {
	case "depth-first", "breadth-first":
		pc.cfg.API.AllocationCandidates.Order = v.Text
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
