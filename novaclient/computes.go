package novaclient

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/placement-syncd/placement-syncd/internal/heartbeat"
)

// ComputeService is one nova-compute service Nova lists. Version is its
// service version when the source knows it (a cell database), 0 when it
// does not (the compute API never shows it).
type ComputeService struct {
	Host    string `json:"host"`
	Version int    `json:"version,omitempty"`
	// Cell names the cell database it was read from, "" for the API.
	Cell string `json:"cell,omitempty"`
	// Down: Nova listed it with status UNKNOWN, its cell not answering
	// Nova; only a cell database can give it a version.
	Down bool `json:"down,omitempty"`
	// NoCell: Nova lists it but no configured cell database holds it (a
	// cell missing from the configuration); it has no known version.
	NoCell bool `json:"no_cell,omitempty"`
}

// novaServiceJSON is one entry of GET /os-services, reduced to what the
// gate uses. A deleted service is not listed by the API at all.
type novaServiceJSON struct {
	Host       string `json:"host"`
	Binary     string `json:"binary"`
	ForcedDown bool   `json:"forced_down"`
	// Status is "UNKNOWN" (from 2.69) for a service of a cell Nova could
	// not read; such an entry carries nothing else but host and binary.
	Status string `json:"status"`
}

// statusUnknown is the status of a service in a cell Nova cannot read.
const statusUnknown = "UNKNOWN"

// computesFromServices keeps the nova-compute services that are not
// forced down; disabled ones count, as they do for Nova, and so do those
// of a cell Nova could not read (marked Down).
func computesFromServices(svcs []novaServiceJSON) []ComputeService {
	var out []ComputeService
	for _, s := range svcs {
		if s.Binary == heartbeat.ComputeBinary && !s.ForcedDown && s.Host != "" {
			out = append(out, ComputeService{Host: s.Host, Down: s.Status == statusUnknown})
		}
	}
	return out
}

// Computes implements ComputeLister: GET /os-services?binary=nova-compute.
func (n *API) Computes(ctx context.Context) ([]ComputeService, error) {
	ctx, cancel := n.bound(ctx)
	defer cancel()
	svcs, err := listAll[novaServiceJSON](ctx, n.client, "services", "os-services?binary="+heartbeat.ComputeBinary)
	if err != nil {
		return nil, fmt.Errorf("%w: list services: %w", ErrUnavailable, err)
	}
	return computesFromServices(svcs), nil
}

// Computes implements ComputeLister from the file's "services" key (the
// answer of GET /os-services); a file without one lists no computes.
func (f File) Computes(context.Context) ([]ComputeService, error) {
	data, err := os.ReadFile(f.Path)
	if err != nil {
		return nil, fmt.Errorf("%w: read %s: %w", ErrUnavailable, f.Path, err)
	}
	var doc struct {
		Services *[]novaServiceJSON `json:"services"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%w: %s: decode: %w", ErrUnavailable, f.Path, err)
	}
	if doc.Services == nil {
		return nil, fmt.Errorf("%w: %s has no \"services\" (the answer of GET /os-services)", ErrUnavailable, f.Path)
	}
	return computesFromServices(*doc.Services), nil
}
