package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// Override is a value set on the command line, which wins over the files.
type Override struct {
	Key  string // dotted config key, e.g. "api.listen"
	Flag string // e.g. "--listen"
	Set  func(*Config)
}

// Sources are where a configuration is read from, weakest first: the
// defaults, OpenStack Placement's placement.conf, our YAML file, the
// command line. Either file may be absent.
type Sources struct {
	PlacementConf string
	YAML          string
	Overrides     []Override
}

// Load is the one way a configuration is read: every source in order,
// then one validation of the result, which also reads the clouds.yaml
// entries the configuration names (checkClouds; no network). Errors name
// the file and line, or the flag, of each bad key. The PlacementConf it returns is nil unless
// src names one.
func Load(src Sources) (Config, *PlacementConf, error) {
	if src.PlacementConf == "" {
		cfg, err := loadOver(Default(), src.YAML, src.Overrides)
		return cfg, nil, err
	}
	pc, err := readPlacementConf(src.PlacementConf)
	if err != nil {
		return Config{}, nil, err
	}
	// Our database, named by the YAML or a flag, replaces placement.conf's
	// connection as a whole: a YAML database.path alone drops a MySQL
	// connection, as --db PATH does.
	base := pc.cfg
	yamlPathSet, yamlConnSet := yamlSetsKey(src.YAML, "database", "path"), yamlSetsKey(src.YAML, "database", "connection")
	if yamlPathSet && !yamlConnSet {
		base.Database.Connection = ""
	}
	cfg, err := loadOver(base, src.YAML, src.Overrides)
	if yamlPathSet || yamlConnSet || slices.ContainsFunc(src.Overrides, func(o Override) bool {
		return o.Key == "database.path" || o.Key == "database.connection"
	}) {
		pc.Database = nil
	}
	return cfg, &pc.PlacementConf, err
}

// loadOver reads the YAML at path (none: base alone) over base, applies
// the overrides and validates.
func loadOver(base Config, path string, overrides []Override) (Config, error) {
	cfg := base
	var doc *yaml.Node
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return cfg, fmt.Errorf("read config: %w", err)
		}
		if doc, err = decodeConfig(path, data, &cfg); err != nil {
			return cfg, err
		}
	}
	flagOf := map[string]string{}
	for _, o := range overrides {
		o.Set(&cfg)
		flagOf[o.Key] = o.Flag
	}
	if err := cfg.Validate(); err != nil {
		var errs []error
		for _, e := range unjoin(err) {
			var fe *fieldError
			switch {
			case !errors.As(e, &fe):
				errs = append(errs, e)
			case flagOf[fe.Key] != "":
				errs = append(errs, fmt.Errorf("flag %s: %s", flagOf[fe.Key], fe.Msg))
			default:
				if n := findKey(doc, strings.Split(fe.Key, ".")); n != nil {
					errs = append(errs, fmt.Errorf("%s:%d: %w", path, n.Line, fe))
				} else {
					errs = append(errs, e)
				}
			}
		}
		return cfg, errors.Join(errs...)
	}
	return cfg, nil
}

// unjoin splits an errors.Join result back into its parts.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// decodeConfig decodes data strictly into cfg, which holds the defaults.
// It also returns the node tree, used to put line numbers on errors.
func decodeConfig(path string, data []byte, cfg *Config) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, syntaxError(path, err)
	}
	if doc.Kind == 0 { // empty file or only comments: all defaults
		return nil, nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		if root.Tag == "!!null" {
			return nil, nil
		}
		return nil, fmt.Errorf("%s:%d: the top level must be a mapping of sections (api, database, log)", path, root.Line)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	err := dec.Decode(cfg)
	if err == nil {
		var extra yaml.Node
		if dec.Decode(&extra) != io.EOF {
			return nil, fmt.Errorf("%s:%d: only one YAML document is allowed", path, extra.Line)
		}
		return root, nil
	}
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return nil, syntaxError(path, err)
	}
	errs := make([]error, 0, len(te.Errors))
	for _, msg := range te.Errors {
		errs = append(errs, describeTypeError(path, root, msg))
	}
	return nil, errors.Join(errs...)
}
