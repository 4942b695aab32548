package novaclient

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// Records are what in Nova may hold allocations in Placement: every
// instance (any cell, any state, deleted ones too), the migrations in
// progress and the compute nodes. Partial names why they may be
// incomplete (a cell Nova or we could not read); incomplete records
// confirm nothing as gone.
type Records struct {
	Instances    map[string]bool
	Migrations   map[string]bool
	ComputeNodes map[string]bool
	Partial      []string
}

// NewRecords are empty records, ready to Merge into.
func NewRecords() Records {
	return Records{Instances: map[string]bool{}, Migrations: map[string]bool{}, ComputeNodes: map[string]bool{}}
}

// Merge adds o's records and reasons to v.
func (v *Records) Merge(o Records) {
	for k := range o.Instances {
		v.Instances[k] = true
	}
	for k := range o.Migrations {
		v.Migrations[k] = true
	}
	for k := range o.ComputeNodes {
		v.ComputeNodes[k] = true
	}
	v.Partial = append(v.Partial, o.Partial...)
}

// migrationInProgress: a migration holds allocations unless its status
// is one of Nova's own list of what is not in progress
// (migration_get_in_progress_by_host_and_node). "finished" is not
// there: a resize waiting for confirmation still holds the source's
// allocations under the migration's uuid.
func migrationInProgress(status string) bool {
	switch strings.ToLower(status) {
	case "confirmed", "reverted", "error", "failed", "completed", "cancelled", "done":
		return false
	}
	return true
}

type novaServerJSON struct {
	ID     string `json:"id"`
	Status string `json:"status"`
}

type novaMigrationJSON struct {
	UUID   string `json:"uuid"`
	Status string `json:"status"`
}

// Records reads them through the compute API at 2.69:
// GET /servers for all tenants, live then deleted (the list, not
// /servers/detail: the same records without a Neutron call per page);
// GET /os-migrations (uuids from 2.59); GET /os-hypervisors (compute
// node uuids from 2.53); GET /os-services, whose UNKNOWN entries name a
// cell Nova could not read. A server listed UNKNOWN (a down cell's
// partial record, 2.69) makes the view partial too.
func (n *API) Records(ctx context.Context) (Records, error) {
	ctx, cancel := n.bound(ctx)
	defer cancel()
	v := NewRecords()
	for _, path := range []string{"servers?all_tenants=1", "servers?all_tenants=1&deleted=1"} {
		servers, err := listAll[novaServerJSON](ctx, n.client, "servers", path)
		if err != nil {
			return Records{}, fmt.Errorf("%w: list %s: %w", ErrUnavailable, path, err)
		}
		down := 0
		for _, s := range servers {
			v.Instances[s.ID] = true
			if s.Status == statusUnknown {
				down++
			}
		}
		if down > 0 {
			v.Partial = append(v.Partial, fmt.Sprintf("GET /%s: %d server(s) listed with status UNKNOWN (their cell does not answer Nova)", path, down))
		}
	}
	migs, err := listAll[novaMigrationJSON](ctx, n.client, "migrations", "os-migrations")
	if err != nil {
		return Records{}, fmt.Errorf("%w: list migrations: %w", ErrUnavailable, err)
	}
	for _, m := range migs {
		if m.UUID != "" && migrationInProgress(m.Status) {
			v.Migrations[m.UUID] = true
		}
	}
	hvs, err := listAll[novaHypervisorJSON](ctx, n.client, "hypervisors", "os-hypervisors")
	if err != nil {
		return Records{}, fmt.Errorf("%w: list hypervisors: %w", ErrUnavailable, err)
	}
	st, err := novaStateFromJSON(nil, hvs)
	if err != nil {
		return Records{}, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	for _, node := range st.Nodes {
		v.ComputeNodes[node.UUID] = true
	}
	computes, err := n.Computes(ctx)
	if err != nil {
		return Records{}, err
	}
	var down []string
	for _, c := range computes {
		if c.Down {
			down = append(down, c.Host)
		}
	}
	if len(down) > 0 {
		v.Partial = append(v.Partial, fmt.Sprintf("GET /os-services: nova-compute on %s listed with status UNKNOWN (a cell does not answer Nova)", strings.Join(down, ",")))
	}
	return v, nil
}

// Read only queries of one cell database: every instance (deleted ones
// too), the migrations not finished, the live compute nodes.
const (
	cellInstancesQuery    = "SELECT uuid FROM instances WHERE uuid IS NOT NULL"
	cellComputeNodesQuery = "SELECT uuid FROM compute_nodes WHERE deleted = 0 AND uuid IS NOT NULL"
	cellMigrationsQuery   = "SELECT uuid, status FROM migrations WHERE deleted = 0 AND uuid IS NOT NULL"
)

// Records reads them from the databases, read only: the API
// database's instance mappings when it is configured, and every cell's
// instances, migrations and compute nodes. A database that cannot be
// read makes the view partial, naming it, as does a cell list nothing
// can check (CellDatabases.Complete); no cell list is an error.
func (c CellDatabases) Records(ctx context.Context) (Records, error) {
	timeout := c.QueryTimeout
	if timeout <= 0 {
		timeout = DefaultCellQueryTimeout
	}
	cells, err := c.cells(ctx, timeout)
	if err != nil {
		return Records{}, fmt.Errorf("%w: cell mappings: %w", ErrUnavailable, err)
	}
	if len(cells) == 0 {
		return Records{}, fmt.Errorf("%w: no cell database to read", ErrUnavailable)
	}
	v := NewRecords()
	// Without a way to check the cell list, an instance of a cell left
	// out would look orphaned: the view is partial, so the audit deletes
	// nothing on it.
	if err := c.unchecked(); err != nil {
		v.Partial = append(v.Partial, "instances of a cell left out would look orphaned: "+err.Error())
	}
	if c.APIDatabase != "" {
		if err := readMappings(ctx, c.APIDatabase, timeout, &v); err != nil {
			v.Partial = append(v.Partial, fmt.Sprintf("API database's instance_mappings not readable: %v", err))
		}
	}
	for _, cell := range cells {
		if err := readAuditCell(ctx, cell, timeout, &v); err != nil {
			v.Partial = append(v.Partial, fmt.Sprintf("cell %s database not readable: %v", cell.Name, err))
		}
	}
	return v, nil
}

// mappingsQuery lists every instance the API database maps, from its
// build request on (before any cell holds it: the scheduler has claimed
// its allocations already) until its deleted row is archived.
const mappingsQuery = "SELECT instance_uuid FROM instance_mappings"

func readMappings(ctx context.Context, dsn string, timeout time.Duration, v *Records) error {
	cfg, err := ParseCellDSN(dsn)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return readOnly(ctx, cfg, timeout, func(tx *sql.Tx) error {
		ids, err := queryStrings(ctx, tx, mappingsQuery)
		for _, id := range ids {
			v.Instances[id] = true
		}
		return err
	})
}

// readAuditCell adds one cell's records to v, all or none.
func readAuditCell(ctx context.Context, cell CellDatabase, timeout time.Duration, v *Records) error {
	cfg, err := ParseCellDSN(cell.DSN)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	got := NewRecords()
	err = readOnly(ctx, cfg, timeout, func(tx *sql.Tx) error {
		for _, q := range []struct {
			query string
			into  map[string]bool
		}{{cellInstancesQuery, got.Instances}, {cellComputeNodesQuery, got.ComputeNodes}} {
			ids, err := queryStrings(ctx, tx, q.query)
			if err != nil {
				return err
			}
			for _, id := range ids {
				q.into[id] = true
			}
		}
		rows, err := tx.QueryContext(ctx, cellMigrationsQuery)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			var status sql.NullString
			if err := rows.Scan(&id, &status); err != nil {
				return err
			}
			if migrationInProgress(status.String) {
				got.Migrations[id] = true
			}
		}
		return rows.Err()
	})
	if err != nil {
		return err
	}
	v.Merge(got)
	return nil
}
