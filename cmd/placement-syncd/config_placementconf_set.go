package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/placement-syncd/placement-syncd/adopt/upstream"
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
	pc.conn = &confConnection{file: f, value: v, url: u}
	if file := dbstore.File(u); file != "" {
		pc.cfg.Database.Path = file
		return nil
	}
	pc.cfg.Database.Connection = v.Text
	return nil
}

// confConnection is placement.conf's connection and where it was read.
type confConnection struct {
	file  *osloconf.File
	value osloconf.Value
	url   *dburl.URL
}

// refusePlacementOwn fails when the connection names OpenStack
// Placement's own database: we do not serve Placement's schema, we serve
// a copy of it in a database of ours. A database that cannot be opened
// or read is not judged here; serve reports it when it opens it.
func (c *confConnection) refusePlacementOwn() error {
	if dbstore.Stat(c.url) != nil {
		return nil // serve creates a new file of ours
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	db, dialect, err := openUpstream(ctx, c.url, false)
	if err != nil {
		return nil
	}
	defer db.Close()
	if own, err := upstream.IsPlacement(ctx, db, dialect); err != nil || !own {
		return nil
	}
	return exitError{code: exitSchema, err: c.file.Bad(c.value, "%s is OpenStack Placement's own database (it has alembic_version), and placement-syncd serves a database of its own: "+
		"copy it with 'placement-syncd db import --from %s --db URL-OR-PATH' into an empty database of ours, "+
		"then name that database with database.connection (or database.path) in the --config YAML, or --db", c.url, c.url)}
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
