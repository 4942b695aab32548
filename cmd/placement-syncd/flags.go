package main

import (
	"flag"
	"io"
	"strings"

	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/config"
)

// configSpec is how a command offers the configuration flags: --config
// always (its default and help when not the built-in ones), --db unless
// noDB, --placement-conf when placementConf.
type configSpec struct {
	path, usage   string
	noDB          bool
	placementConf bool
	// reportsPolicy: the command reports on the configuration rather
	// than acting on it (policy list prints the policy file's findings,
	// version the release), so the preflight only compiles the file.
	reportsPolicy bool
}

// configFlags are the configuration flags of one command's flag set.
type configFlags struct {
	fs                  *flag.FlagSet
	path, db, placement string
	reportsPolicy       bool
}

// newConfigFlagSet is newFlagSet with the configuration flags spec asks
// for registered.
func newConfigFlagSet(name, synopsis string, stderr io.Writer, spec configSpec) (*flag.FlagSet, *configFlags) {
	fs := newFlagSet(name, synopsis, stderr)
	return fs, registerConfig(fs, spec)
}

// registerConfig registers on fs the configuration flags spec asks for.
func registerConfig(fs *flag.FlagSet, spec configSpec) *configFlags {
	c := &configFlags{fs: fs, reportsPolicy: spec.reportsPolicy}
	usage := spec.usage
	if usage == "" {
		usage = "YAML configuration `file` (default: built-in defaults)"
	}
	fs.StringVar(&c.path, "config", spec.path, usage)
	if !spec.noDB {
		fs.StringVar(&c.db, "db", "", "SQLite database `path` overriding database.path (default \""+config.Default().Database.Path+"\"), or a database URL (mysql+pymysql://…) overriding database.connection")
	}
	if spec.placementConf {
		fs.StringVar(&c.placement, "placement-conf", "", "OpenStack Placement's placement.conf `file` to start from (the --config YAML overrides it)")
	}
	return c
}

// load is how every command reads its configuration, once its flags are
// parsed: the files the flags name, then --db and the command's own
// overrides. Any error is a configuration error (exit 2).
func (c *configFlags) load(more ...config.Override) (config.Config, *config.PlacementConf, error) {
	cfg, pc, err := config.Load(config.Sources{PlacementConf: c.placement, YAML: c.path, Overrides: append(c.dbOverride(), more...)})
	if err != nil {
		return cfg, nil, usageError{err}
	}
	return cfg, pc, preflight(cfg, config.NamesRelease(c.path), c.reportsPolicy)
}

// dbOverride is --db when given: a URL names database.connection, a path
// database.path (dropping a connection).
func (c *configFlags) dbOverride() []config.Override {
	var out []config.Override
	c.fs.Visit(func(f *flag.Flag) {
		if f.Name != "db" {
			return
		}
		v := c.db
		if strings.Contains(v, "://") {
			out = append(out, config.Override{Key: "database.connection", Flag: "--db", Set: func(cfg *config.Config) { cfg.Database.Connection = v }})
		} else {
			out = append(out, config.Override{Key: "database.path", Flag: "--db", Set: func(cfg *config.Config) { cfg.Database.Path, cfg.Database.Connection = v, "" }})
		}
	})
	return out
}

// parseLoad parses a command's arguments, then loads its configuration.
func (c *configFlags) parseLoad(args []string) (config.Config, error) {
	if err := parseFlags(c.fs, args); err != nil {
		return config.Config{}, err
	}
	cfg, _, err := c.load()
	return cfg, err
}

// parseLoadInterleaved is parseLoad for a command whose words and flags
// may come in any order; it returns the words.
func (c *configFlags) parseLoadInterleaved(args []string) ([]string, config.Config, error) {
	words, err := parseInterleaved(c.fs, args)
	if err != nil {
		return nil, config.Config{}, err
	}
	cfg, _, err := c.load()
	return words, cfg, err
}
