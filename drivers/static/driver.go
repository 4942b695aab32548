// Package static is a driver that reads provider trees from a YAML (or
// JSON) file, for demos and tests. The file is re-read on every pass, so
// editing it changes Placement within one interval.
package static

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"gopkg.in/yaml.v3"

	"github.com/placement-syncd/placement-syncd/drivers"
)

// Options configures the driver.
type Options struct {
	// File holds the providers (see README.md).
	File string
}

// Driver reports the file's providers.
type Driver struct{ file string }

// New validates opts.
func New(opts Options) (*Driver, error) {
	if opts.File == "" {
		return nil, errors.New("static: a file is required")
	}
	return &Driver{file: opts.File}, nil
}

// Name implements drivers.Driver.
func (d *Driver) Name() string { return "static" }

// Close implements drivers.Driver.
func (d *Driver) Close() error { return nil }

// Observe implements drivers.Driver.
func (d *Driver) Observe(ctx context.Context) (*drivers.Tree, error) {
	b, err := os.ReadFile(d.file)
	if err != nil {
		return nil, fmt.Errorf("static: %w", err)
	}
	return Parse(bytes.NewReader(b))
}

type fileDoc struct {
	Providers []fileProvider `yaml:"providers"`
}

type fileProvider struct {
	UUID        string                   `yaml:"uuid"`
	Name        string                   `yaml:"name"`
	ParentUUID  string                   `yaml:"parent_uuid"`
	ParentName  string                   `yaml:"parent_name"`
	Owner       string                   `yaml:"owner"`
	Inventories map[string]fileInventory `yaml:"inventories"`
	Traits      []string                 `yaml:"traits"`
	Aggregates  *[]string                `yaml:"aggregates"`
}

type fileInventory struct {
	Total           int     `yaml:"total"`
	Reserved        int     `yaml:"reserved"`
	MinUnit         int     `yaml:"min_unit"`
	MaxUnit         int     `yaml:"max_unit"`
	StepSize        int     `yaml:"step_size"`
	AllocationRatio float64 `yaml:"allocation_ratio"`
	Unavailable     string  `yaml:"unavailable"`
}

// Parse decodes a providers file strictly and validates the tree.
func Parse(r io.Reader) (*drivers.Tree, error) {
	dec := yaml.NewDecoder(r)
	dec.KnownFields(true)
	var doc fileDoc
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("static: decode: %w", err)
	}
	tree := &drivers.Tree{Providers: make([]drivers.Provider, 0, len(doc.Providers))}
	for _, fp := range doc.Providers {
		if fp.Owner != "" && fp.Owner != drivers.OwnerNova && fp.Owner != drivers.OwnerCyborg {
			return nil, fmt.Errorf("static: provider %s: owner must be %s or %s", fp.Name, drivers.OwnerNova, drivers.OwnerCyborg)
		}
		p := drivers.Provider{
			UUID: fp.UUID, Name: fp.Name, Owner: fp.Owner,
			Parent:      drivers.Ref{UUID: fp.ParentUUID, Name: fp.ParentName},
			Inventories: make(map[string]drivers.Inventory, len(fp.Inventories)),
			Traits:      fp.Traits,
		}
		if fp.Aggregates != nil {
			p.Aggregates = append([]string{}, *fp.Aggregates...)
		}
		for rc, fi := range fp.Inventories {
			if fi.Unavailable != "" && !isReason(fi.Unavailable) {
				return nil, fmt.Errorf("static: provider %s: unknown unavailable reason %q", fp.Name, fi.Unavailable)
			}
			p.Inventories[rc] = drivers.Inventory(fi)
		}
		tree.Providers = append(tree.Providers, p)
	}
	if err := tree.Validate(); err != nil {
		return nil, fmt.Errorf("static: %w", err)
	}
	return tree, nil
}

func isReason(s string) bool {
	for _, r := range drivers.Reasons {
		if r == s {
			return true
		}
	}
	return false
}
