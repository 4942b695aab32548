package mysql

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/placement-syncd/placement-syncd/internal/backoff"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
	"github.com/placement-syncd/placement-syncd/placementsrv/store/sqlrows"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// migrations returns the embedded migration scripts in order.
func migrations() []string { return sqlrows.Scripts(migrationFS) }

// LatestSchemaVersion is the schema version this binary writes.
func LatestSchemaVersion() int { return len(migrations()) }

// migrateLock names the server-wide lock that serializes migrations of
// every database on the server (GET_LOCK names are per server), which
// costs nothing: they are rare and short.
const migrateLock = "placement-syncd.migrate"

// initSchema checks the schema, migrating it when asked. Galera nodes
// migrating at once can abort each other at certification (INSERT IGNORE
// of one row on two nodes, error 1213): the migration, idempotent, runs
// again.
func initSchema(ctx context.Context, db *sql.DB, name string, opts Options) error {
	retry := migrateRetry()
	for attempt := 1; ; attempt++ {
		err := initSchemaOnce(ctx, db, name, opts)
		if err == nil || attempt >= retry.Attempts || !errors.Is(classify(err), store.ErrRetry) {
			return err
		}
		if retry.Wait(ctx, attempt) != nil {
			return err
		}
	}
}

// migrateRetry paces migrations that aborted each other: n·50 ms before
// retry n, 5 tries.
func migrateRetry() backoff.Policy {
	return backoff.Policy{Base: 50 * time.Millisecond, Cap: time.Second, Growth: backoff.Linear, Jitter: backoff.NoJitter, Attempts: 5}
}

func initSchemaOnce(ctx context.Context, db *sql.DB, name string, opts Options) error {
	// One connection for the lock and the work: GET_LOCK belongs to it.
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("open database %s: %w", name, err)
	}
	defer conn.Close()
	if opts.Migrate {
		if err := getLock(ctx, conn); err != nil {
			return fmt.Errorf("migrate %s: %w", name, err)
		}
		defer conn.ExecContext(context.Background(), `DO RELEASE_LOCK(?)`, migrateLock) //nolint:errcheck // released with the connection anyway
	}
	cur, err := schemaVersion(ctx, conn)
	if err != nil {
		return fmt.Errorf("read schema version of %s: %w", name, err)
	}
	if cur == 0 {
		if err := refuseForeign(ctx, conn, name, opts.Adopt); err != nil {
			return err
		}
	}
	latest := LatestSchemaVersion()
	switch {
	case cur > latest:
		return &store.SchemaError{Database: name, Current: cur, Latest: latest}
	case cur < latest && !opts.Migrate:
		return &store.SchemaError{Database: name, Current: cur, Latest: latest}
	case cur < latest:
		if err := applyMigrations(ctx, conn, cur, opts.Now()); err != nil {
			return fmt.Errorf("migrate %s: %w", name, err)
		}
	}
	return nil
}

// getLock takes the migration lock. Galera nodes do not replicate named
// locks, and some MariaDB releases refuse them with wsrep on (1235); the
// migration then runs unlocked, which its idempotent statements allow
// (Galera runs DDL in total order anyway).
func getLock(ctx context.Context, conn *sql.Conn) error {
	var got sql.NullInt64
	err := conn.QueryRowContext(ctx, `SELECT GET_LOCK(?, 60)`, migrateLock).Scan(&got)
	var me *mysql.MySQLError
	if errors.As(err, &me) && me.Number == errNotSupportedYet {
		return nil
	}
	if err != nil {
		return fmt.Errorf("take lock %s: %w", migrateLock, err)
	}
	if got.Int64 != 1 {
		return fmt.Errorf("another process has held lock %s for 60 s", migrateLock)
	}
	return nil
}

// schemaVersion reads how many migrations a database has applied; an
// empty database is version 0.
func schemaVersion(ctx context.Context, conn *sql.Conn) (int, error) {
	return sqlrows.AppliedVersion(ctx, conn, `SELECT count(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = 'schema_migrations'`)
}

// refuseForeign fails with store.ErrForeignDatabase when a database without our
// schema already has tables of its own, unless adopt allows it. OpenStack
// Placement's own database (alembic_version) is refused even with adopt:
// its tables have our tables' names, so ours cannot be added beside them,
// and the way onto it is to copy it with 'db import'.
func refuseForeign(ctx context.Context, conn *sql.Conn, name string, adopt bool) error {
	rows, err := conn.QueryContext(ctx, `SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() ORDER BY table_name`)
	if err != nil {
		return fmt.Errorf("read tables of %s: %w", name, err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return fmt.Errorf("read tables of %s: %w", name, err)
		}
		names = append(names, n)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read tables of %s: %w", name, err)
	}
	switch {
	case slices.Contains(names, "alembic_version"):
		return fmt.Errorf("database %s is OpenStack Placement's own (it has alembic_version and %d other tables), not one of placement-syncd's: "+
			"copy it into an empty database of ours with 'placement-syncd db import --from URL --db NEW-PATH-OR-URL' and serve that one (--adopt cannot add our tables beside Placement's, they share names): %w",
			name, len(names)-1, store.ErrForeignDatabase)
	// Our own schema_migrations at version 0 is a migration under way in
	// another process (Galera nodes do not share the migration lock) or
	// stopped half way: migrating on is safe, every statement being
	// idempotent. It is the first table a migration creates, so no other
	// table of ours can be there without it.
	case len(names) == 0 || adopt || slices.Contains(names, "schema_migrations"):
		return nil
	}
	return fmt.Errorf("database %s has tables of its own (%s) and no placement-syncd schema: is it the right database? "+
		"'placement-syncd db migrate --adopt' adds Placement's tables to it: %w", name, strings.Join(names[:min(len(names), 5)], ", "), store.ErrForeignDatabase)
}

// exactCollations are utf8mb4 collations that compare bytes and do not
// pad: MariaDB's, then MySQL 8's. utf8mb4_bin pads ("a" = "a ").
var exactCollations = []string{"utf8mb4_nopad_bin", "utf8mb4_0900_bin"}

// tableOptions picks the options of every table for this server.
func tableOptions(ctx context.Context, conn *sql.Conn) (string, error) {
	for _, c := range exactCollations {
		var n int
		if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM information_schema.collations WHERE collation_name = ?`, c).Scan(&n); err != nil {
			return "", fmt.Errorf("read collations: %w", err)
		}
		if n > 0 {
			return "ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=" + c, nil
		}
	}
	return "", fmt.Errorf("the server has none of the collations %s: MariaDB ≥ 10.2 or MySQL ≥ 8.0 is needed", strings.Join(exactCollations, ", "))
}

// statements splits a migration script into statements: comment lines
// dropped, statements ending with ';' at the end of a line.
func statements(script, options string) []string {
	var out []string
	var cur strings.Builder
	for _, line := range strings.Split(script, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "--") {
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
		if strings.HasSuffix(strings.TrimSpace(line), ";") {
			st := strings.TrimSuffix(strings.TrimSpace(cur.String()), ";")
			out = append(out, strings.ReplaceAll(st, "{table}", options))
			cur.Reset()
		}
	}
	if st := strings.TrimSpace(cur.String()); st != "" {
		out = append(out, strings.ReplaceAll(st, "{table}", options))
	}
	return out
}

// applyMigrations applies each pending migration, recording it. MySQL
// commits DDL as it goes, so a migration is not atomic: each is written
// to be run again after a failure, and is recorded only once complete.
func applyMigrations(ctx context.Context, conn *sql.Conn, from int, now time.Time) error {
	options, err := tableOptions(ctx, conn)
	if err != nil {
		return err
	}
	if _, err := conn.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version INT NOT NULL PRIMARY KEY, name VARCHAR(255) NOT NULL, applied_at BIGINT NOT NULL) `+options); err != nil {
		return err
	}
	for i, name := range migrations() {
		v := i + 1
		if v <= from {
			continue
		}
		body, err := migrationFS.ReadFile(name)
		if err != nil {
			return err
		}
		for _, st := range statements(string(body), options) {
			if _, err := conn.ExecContext(ctx, st); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
		// IGNORE: an unlocked concurrent migrator may have recorded it.
		if _, err := conn.ExecContext(ctx, `INSERT IGNORE INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`, v, name, now.UnixNano()); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// SchemaVersion reports the schema version of the database of cfg and
// the binary's, for 'db version'; it changes nothing.
func SchemaVersion(ctx context.Context, cfg *mysql.Config) (current, latest int, err error) {
	name := Name(cfg)
	conn, err := mysql.NewConnector(connConfig(cfg))
	if err != nil {
		return 0, 0, fmt.Errorf("open database %s: %w", name, err)
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	c, err := db.Conn(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("open database %s: %w", name, err)
	}
	defer c.Close()
	current, err = schemaVersion(ctx, c)
	if err != nil {
		return 0, 0, fmt.Errorf("read schema version of %s: %w", name, err)
	}
	return current, LatestSchemaVersion(), nil
}
