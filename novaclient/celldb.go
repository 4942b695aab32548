package novaclient

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/placement-syncd/placement-syncd/internal/dburl"
	"github.com/placement-syncd/placement-syncd/internal/heartbeat"
)

// CellDatabase is one Nova cell database, read only.
type CellDatabase struct {
	// Name labels the cell in the gate's answer, logs and metrics.
	Name string
	// DSN is Nova's URL form (mysql+pymysql://user:pw@host:port/db?charset=utf8,
	// as in nova.conf and cell_mappings) or a go-sql-driver/mysql DSN.
	DSN string
}

// DefaultCellQueryTimeout bounds the reading of one cell database: a
// hung cell fails the read (closing the gate) instead of holding it.
const DefaultCellQueryTimeout = 30 * time.Second

// CellDatabases reads the services table of each cell database: the
// only place Nova keeps service versions. The cells are those of the API
// database's cell_mappings when APIDatabase is set (a configured cell of
// the same name replaces the mapping's address, e.g. with a read-only
// user), else the configured ones. Any cell that cannot be read fails the
// whole list (an UnreadableCellsError), so that an unreadable cell closes
// the gate instead of being skipped, as Nova's scheduler would skip it.
type CellDatabases struct {
	// APIDatabase is the nova_api database (either form of CellDatabase.DSN).
	APIDatabase string
	Cells       []CellDatabase
	// Nova, when set and APIDatabase is not, is Nova's own list
	// (os-services): a host it lists that no configured cell holds
	// keeps the gate closed, as a cell missing from the configuration
	// would otherwise be ignored.
	Nova ComputeLister
	// Complete is the operator's word that Cells are every cell Nova
	// has. Without it, and with neither APIDatabase nor Nova to check
	// them against, Computes fails with an UncheckedCellsError: a cell
	// left out would be invisible, its computes never counted.
	Complete bool
	// QueryTimeout bounds each cell's read (0: DefaultCellQueryTimeout).
	QueryTimeout time.Duration
}

// CellFailure is one cell that could not be read.
type CellFailure struct {
	Cell string
	Err  error
}

// UnreadableCellsError lists the cells that could not be read; it wraps
// ErrUnavailable.
type UnreadableCellsError struct {
	Failed []CellFailure
}

func (e *UnreadableCellsError) Error() string {
	parts := make([]string, 0, len(e.Failed))
	for _, f := range e.Failed {
		parts = append(parts, "cell "+f.Cell+": "+f.Err.Error())
	}
	return fmt.Sprintf("%v: %d cell database(s) not readable: %s", ErrUnavailable, len(e.Failed), strings.Join(parts, "; "))
}

func (e *UnreadableCellsError) Unwrap() error { return ErrUnavailable }

// Names are the unreadable cells' names.
func (e *UnreadableCellsError) Names() []string {
	out := make([]string, 0, len(e.Failed))
	for _, f := range e.Failed {
		out = append(out, f.Cell)
	}
	return out
}

// UncheckedCellsError: the configured cells are all the gate would read,
// and nothing configured can tell whether Nova has others. It wraps
// ErrUnavailable.
type UncheckedCellsError struct {
	Cells []string
}

func (e *UncheckedCellsError) Error() string {
	return fmt.Sprintf("reconciler.nova.cell_databases lists only %s, and nothing configured can show a cell it leaves out: "+
		"set reconciler.nova.api_database (its cell_mappings name every cell) or a compute API to check against "+
		"(reconciler.nova.endpoint or cloud), or reconciler.nova.cell_databases_complete: true to assert these are all of Nova's cells",
		strings.Join(e.Cells, ", "))
}

func (e *UncheckedCellsError) Unwrap() error { return ErrUnavailable }

// unchecked is an UncheckedCellsError when nothing configured can show a
// cell the list leaves out (no API database, no Nova list, no operator's
// word), else nil.
func (c CellDatabases) unchecked() error {
	if c.APIDatabase != "" || c.Nova != nil || c.Complete {
		return nil
	}
	names := make([]string, 0, len(c.Cells))
	for _, cell := range c.Cells {
		names = append(names, cell.Name)
	}
	return &UncheckedCellsError{Cells: names}
}

// ParseCellDSN reads a cell (or API) database address in Nova's URL form
// or as a go-sql-driver/mysql DSN.
func ParseCellDSN(s string) (*mysql.Config, error) {
	if !strings.Contains(s, "://") {
		return mysql.ParseDSN(s)
	}
	u, err := dburl.Parse(s)
	if err != nil {
		return nil, err
	}
	if u.MySQL == nil {
		return nil, fmt.Errorf("database URL %s: Nova's databases are MySQL (mysql+pymysql://…)", u)
	}
	return u.MySQL, nil
}

// computesQuery reads every live compute row: a row held by the cell
// counts for coverage; only those Nova's minimum-version query counts
// (not forced down, version above 0) count for the gate.
const computesQuery = "SELECT host, version, forced_down FROM services WHERE `binary` = ? AND deleted = 0 ORDER BY host"

// cellNamesQuery lists the cells but cell0, which holds no services;
// cellAddressQuery reads one mapping's address, only for a cell the
// configuration does not give, so that a read-only user may be granted
// the names alone and never see Nova's own credentials.
const (
	cellNamesQuery = "SELECT COALESCE(name, uuid) FROM cell_mappings " +
		"WHERE uuid <> '00000000-0000-0000-0000-000000000000' ORDER BY name, uuid"
	cellAddressQuery = "SELECT database_connection FROM cell_mappings WHERE COALESCE(name, uuid) = ?"
)

// Computes implements ComputeLister.
func (c CellDatabases) Computes(ctx context.Context) ([]ComputeService, error) {
	timeout := c.QueryTimeout
	if timeout <= 0 {
		timeout = DefaultCellQueryTimeout
	}
	if err := c.unchecked(); err != nil {
		return nil, err
	}
	cells, err := c.cells(ctx, timeout)
	if err != nil {
		return nil, fmt.Errorf("%w: cell mappings: %w", ErrUnavailable, err)
	}
	var out []ComputeService
	held := map[string]bool{}
	var failed []CellFailure
	for _, cell := range cells {
		rows, err := readCell(ctx, cell, timeout)
		if err != nil {
			failed = append(failed, CellFailure{Cell: cell.Name, Err: err})
			continue
		}
		for _, r := range rows {
			held[r.svc.Host] = true
			if r.counted {
				out = append(out, r.svc)
			}
		}
	}
	if len(failed) > 0 {
		return nil, &UnreadableCellsError{Failed: failed}
	}
	if c.Nova == nil || c.APIDatabase != "" {
		return out, nil
	}
	listed, err := c.Nova.Computes(ctx)
	if err != nil {
		return nil, fmt.Errorf("check the configured cells against Nova's list: %w", err)
	}
	for _, l := range listed {
		if !held[l.Host] {
			out = append(out, ComputeService{Host: l.Host, Down: l.Down, NoCell: true})
		}
	}
	return out, nil
}

// cells are the cells to read: the API database's mappings, each at the
// configured address of the same name or else at the mapping's; or the
// configured cells when there is no API database.
func (c CellDatabases) cells(ctx context.Context, timeout time.Duration) ([]CellDatabase, error) {
	if c.APIDatabase == "" {
		return c.Cells, nil
	}
	cfg, err := ParseCellDSN(c.APIDatabase)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var mapped []CellDatabase
	err = readOnly(ctx, cfg, timeout, func(tx *sql.Tx) error {
		names, err := queryStrings(ctx, tx, cellNamesQuery)
		if err != nil {
			return err
		}
		for _, name := range names {
			cell := CellDatabase{Name: name}
			for _, conf := range c.Cells {
				if conf.Name == name {
					cell.DSN = conf.DSN
				}
			}
			if cell.DSN == "" {
				if err := tx.QueryRowContext(ctx, cellAddressQuery, name).Scan(&cell.DSN); err != nil {
					return fmt.Errorf("cell %s is not in reconciler.nova.cell_databases and its mapping's address cannot be read: %w", name, err)
				}
			}
			mapped = append(mapped, cell)
		}
		return nil
	})
	return mapped, err
}

func queryStrings(ctx context.Context, tx *sql.Tx, query string) ([]string, error) {
	rows, err := tx.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// cellRow is one compute row of a cell.
type cellRow struct {
	svc     ComputeService
	counted bool
}

func readCell(ctx context.Context, cell CellDatabase, timeout time.Duration) ([]cellRow, error) {
	cfg, err := ParseCellDSN(cell.DSN)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var out []cellRow
	err = readOnly(ctx, cfg, timeout, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, computesQuery, heartbeat.ComputeBinary)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var host sql.NullString
			var version sql.NullInt64
			var forcedDown sql.NullBool
			if err := rows.Scan(&host, &version, &forcedDown); err != nil {
				return err
			}
			if !host.Valid {
				continue
			}
			s := ComputeService{Host: host.String, Version: int(version.Int64), Cell: cell.Name}
			out = append(out, cellRow{svc: s, counted: !forcedDown.Bool && s.Version > 0})
		}
		return rows.Err()
	})
	return out, err
}

// readOnly runs fn in a read-only transaction on a connection of its
// own, dialled within timeout.
func readOnly(ctx context.Context, cfg *mysql.Config, timeout time.Duration, fn func(*sql.Tx) error) error {
	cfg = cfg.Clone()
	cfg.Timeout = timeout
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return err
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // read only: nothing to undo
	return fn(tx)
}
