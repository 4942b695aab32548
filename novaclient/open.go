package novaclient

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/gophercloud/gophercloud/v2"

	"github.com/placement-syncd/placement-syncd/internal/cloudsyaml"
)

// Settings say where Nova's state and compute list come from: at
// most one of a file of its answers (File), a compute API reached with a
// token (Endpoint, Token) or through a clouds.yaml entry (Cloud, in
// CloudsFile or the usual places when empty), and optionally the API and
// cell databases.
type Settings struct {
	// File holds {"aggregates": [...], "hypervisors": [...]}.
	File       string
	Endpoint   string
	Token      string
	Cloud      string
	CloudsFile string
	// Timeout bounds each compute API listing (API.Timeout).
	Timeout time.Duration
	// APIDatabase and CellDatabases, when set, are where nova-compute
	// services and records are read (CellDatabases); CellTimeout bounds
	// each read.
	APIDatabase   string
	CellDatabases []CellDatabase
	CellTimeout   time.Duration
	// CellDatabasesComplete asserts that CellDatabases are every cell
	// (CellDatabases.Complete).
	CellDatabasesComplete bool
}

// Open builds the Nova source s selects, with Timeout applied to a
// compute API however it is reached; nil when none is set.
func Open(ctx context.Context, s Settings) (Source, error) {
	nova, err := open(ctx, s)
	if err != nil {
		return nil, err
	}
	if api, ok := nova.(*API); ok {
		api.Timeout = s.Timeout
	}
	return nova, nil
}

// open is Open before the timeout.
func open(ctx context.Context, s Settings) (Source, error) {
	switch {
	case s.File != "":
		return File{Path: s.File}, nil
	case s.Endpoint != "":
		pc := &gophercloud.ProviderClient{HTTPClient: http.Client{Timeout: s.Timeout}}
		pc.SetToken(s.Token)
		return NewAPI(&gophercloud.ServiceClient{ProviderClient: pc, Endpoint: gophercloud.NormalizeURL(s.Endpoint), Type: "compute"}), nil
	case s.Cloud != "":
		// The entry's TLS settings apply.
		entry, err := cloudsyaml.Read(cloudsyaml.Source{File: s.CloudsFile, Cloud: s.Cloud})
		if err != nil {
			return nil, fmt.Errorf("nova: %w", err)
		}
		hc, err := entry.HTTPClient(nil)
		if err != nil {
			return nil, fmt.Errorf("nova: %w", err)
		}
		sc, err := entry.ServiceClient(ctx, hc, "compute")
		if err != nil {
			return nil, fmt.Errorf("nova: %w", err)
		}
		return NewAPI(sc), nil
	}
	return nil, nil
}

// OpenComputes is where Nova's nova-compute services are read: the cell
// databases when set (the only place with their versions), else the Nova
// source (os-services or the file's services); nil when there is none.
func OpenComputes(ctx context.Context, s Settings) (ComputeLister, error) {
	nova, err := Open(ctx, s)
	if err != nil {
		return nil, err
	}
	return ComputesFrom(s, nova), nil
}

// ComputesFrom is OpenComputes over an already built Nova source. With
// cell databases but no API database, Nova's own list (os-services) is
// what tells a cell missing from the settings.
func ComputesFrom(s Settings, nova Source) ComputeLister {
	listed, _ := nova.(ComputeLister)
	cells, ok := s.Cells()
	if !ok {
		return listed
	}
	cells.Nova = listed
	return cells
}

// Cells are the cell databases the settings name, without Nova's own
// list; false when they name none.
func (s Settings) Cells() (CellDatabases, bool) {
	if len(s.CellDatabases) == 0 && s.APIDatabase == "" {
		return CellDatabases{}, false
	}
	return CellDatabases{APIDatabase: s.APIDatabase, Cells: s.CellDatabases, QueryTimeout: s.CellTimeout, Complete: s.CellDatabasesComplete}, true
}
