package reconciler

import (
	"context"
	"database/sql"
	"fmt"

	// The MySQL protocol driver, for Nova's cell databases.
	_ "github.com/go-sql-driver/mysql"
)

// CellDatabase is one Nova cell database, read only.
type CellDatabase struct {
	// Name labels the cell in the gate's answer.
	Name string
	// DSN is a go-sql-driver/mysql data source name.
	DSN string
}

// CellDatabases reads the services table of each cell database: the
// only place Nova keeps service versions. Any cell that cannot be read
// fails the whole list, so that an unreadable cell keeps the gate
// closed instead of being skipped (Nova's scheduler skips it).
type CellDatabases struct {
	Cells []CellDatabase
}

// computesQuery applies the filters of Nova's minimum-version query
// (deleted = 0, forced_down false) and, as get_minimum_version_all_cells
// does, ignores versions of 0 and below.
const computesQuery = "SELECT host, version FROM services WHERE `binary` = ? AND deleted = 0 AND forced_down = 0 AND version > 0 ORDER BY host"

// Computes implements ComputeSource.
func (c CellDatabases) Computes(ctx context.Context) ([]ComputeService, error) {
	var out []ComputeService
	for _, cell := range c.Cells {
		got, err := readCell(ctx, cell)
		if err != nil {
			return nil, fmt.Errorf("%w: cell %s: %w", ErrNovaUnavailable, cell.Name, err)
		}
		out = append(out, got...)
	}
	return out, nil
}

func readCell(ctx context.Context, cell CellDatabase) ([]ComputeService, error) {
	db, err := sql.Open("mysql", cell.DSN)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback() //nolint:errcheck // read only: nothing to undo
	rows, err := tx.QueryContext(ctx, computesQuery, ComputeBinary)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []ComputeService
	for rows.Next() {
		var s ComputeService
		var host sql.NullString
		if err := rows.Scan(&host, &s.Version); err != nil {
			return nil, err
		}
		s.Host, s.Cell = host.String, cell.Name
		out = append(out, s)
	}
	return out, rows.Err()
}
