package novaclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
)

// Flavor is one Nova flavor as GET /flavors/detail answers it from
// microversion 2.61 on, extra specs inline. Swap is in MB, Disk and
// Ephemeral in GB, RAM in MB, as Nova stores them.
type Flavor struct {
	ID         string            `json:"id"`
	Name       string            `json:"name"`
	VCPUs      int64             `json:"vcpus"`
	RAM        int64             `json:"ram"`
	Disk       int64             `json:"disk"`
	Ephemeral  int64             `json:"ephemeral"`
	Swap       int64             `json:"swap"`
	Public     bool              `json:"public"`
	Disabled   bool              `json:"disabled"`
	ExtraSpecs map[string]string `json:"extra_specs"`
}

// FlavorLister reads every flavor, public and private.
type FlavorLister interface {
	Flavors(ctx context.Context) ([]Flavor, error)
}

// novaFlavorJSON is one entry of GET /flavors/detail. Swap is "" for no
// swap before microversion 2.75 and an integer from then on.
type novaFlavorJSON struct {
	ID         string            `json:"id"`
	Name       string            `json:"name"`
	VCPUs      int64             `json:"vcpus"`
	RAM        int64             `json:"ram"`
	Disk       int64             `json:"disk"`
	Ephemeral  int64             `json:"OS-FLV-EXT-DATA:ephemeral"`
	Swap       json.RawMessage   `json:"swap"`
	Public     *bool             `json:"os-flavor-access:is_public"`
	Disabled   bool              `json:"OS-FLV-DISABLED:disabled"`
	ExtraSpecs map[string]string `json:"extra_specs"`
}

// flavorsFromJSON converts decoded entries, refusing an answer without
// extra specs (a microversion below 2.61 leaves them out, and a flavor
// read so would look like one without any).
func flavorsFromJSON(in []novaFlavorJSON) ([]Flavor, error) {
	out := make([]Flavor, 0, len(in))
	for _, f := range in {
		if f.ExtraSpecs == nil {
			return nil, fmt.Errorf("flavor %q has no extra_specs (Nova compute API microversion >= 2.61 is needed)", f.Name)
		}
		swap, err := swapMB(f.Swap)
		if err != nil {
			return nil, fmt.Errorf("flavor %q: %w", f.Name, err)
		}
		out = append(out, Flavor{ID: f.ID, Name: f.Name, VCPUs: f.VCPUs, RAM: f.RAM, Disk: f.Disk,
			Ephemeral: f.Ephemeral, Swap: swap, Public: f.Public == nil || *f.Public, Disabled: f.Disabled,
			ExtraSpecs: f.ExtraSpecs})
	}
	return out, nil
}

// swapMB reads swap as an integer, "" (or absent) being none.
func swapMB(raw json.RawMessage) (int64, error) {
	s := string(raw)
	if s == "" || s == `""` || s == "null" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("bad swap %s", s)
	}
	return n, nil
}

// Flavors implements FlavorLister: every page of
// GET /flavors/detail?is_public=None, which lists private flavors too
// for an admin.
func (n *API) Flavors(ctx context.Context) ([]Flavor, error) {
	ctx, cancel := n.bound(ctx)
	defer cancel()
	raw, err := listAll[novaFlavorJSON](ctx, n.client, "flavors", "flavors", "detail?is_public=None")
	if err != nil {
		return nil, fmt.Errorf("%w: list flavors: %w", ErrUnavailable, err)
	}
	flavors, err := flavorsFromJSON(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return flavors, nil
}

// Flavors implements FlavorLister from the file's "flavors" key (the
// answer of GET /flavors/detail at microversion >= 2.61); a file without
// one is an error, not a cloud without flavors.
func (f File) Flavors(context.Context) ([]Flavor, error) {
	data, err := os.ReadFile(f.Path)
	if err != nil {
		return nil, fmt.Errorf("%w: read %s: %w", ErrUnavailable, f.Path, err)
	}
	var doc struct {
		Flavors *[]novaFlavorJSON `json:"flavors"`
	}
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
		return nil, fmt.Errorf("%w: %s: decode: %w", ErrUnavailable, f.Path, err)
	}
	if doc.Flavors == nil {
		return nil, fmt.Errorf("%w: %s has no \"flavors\" (the answer of GET /flavors/detail)", ErrUnavailable, f.Path)
	}
	flavors, err := flavorsFromJSON(*doc.Flavors)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrUnavailable, f.Path, err)
	}
	return flavors, nil
}
