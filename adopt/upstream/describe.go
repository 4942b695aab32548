package upstream

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Describe lists the structure of every table in db (columns with types,
// nullability and defaults; keys; indexes; foreign keys; constraint
// names; on MySQL engines and collations) and the alembic revision, one
// fact per line, sorted, in terms that do not depend on how the DDL was
// spelled. Two databases that Describe alike are ones Placement's
// migrations and queries cannot tell apart: it is how an export is
// checked against a database Placement created itself.
func Describe(ctx context.Context, db *sql.DB, d Dialect) ([]string, error) {
	queries := mysqlDescribe
	if d == SQLite {
		queries = sqliteDescribe
	}
	var out []string
	for _, q := range queries() {
		lines, err := describeRows(ctx, db, q.kind, q.query)
		if err != nil {
			return nil, fmt.Errorf("describe %s: %w", q.kind, err)
		}
		out = append(out, lines...)
	}
	if d == SQLite {
		names, err := sqliteConstraintNames(ctx, db)
		if err != nil {
			return nil, err
		}
		out = append(out, names...)
	}
	sort.Strings(out)
	return out, nil
}

type describeQuery struct{ kind, query string }

// sqliteDescribe reads SQLite's pragmas. The indexes SQLite makes for a
// primary key or a UNIQUE constraint have generated names, so they are
// named by origin; the constraint names are in the table's SQL.
func sqliteDescribe() []describeQuery {
	const tables = `FROM sqlite_master m JOIN `
	const only = ` WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%'`
	return []describeQuery{
		{"column", `SELECT m.name, p.cid, p.name, upper(p.type), p."notnull", p.dflt_value, p.pk ` + tables + `pragma_table_info(m.name) p` + only},
		{"index", `SELECT t, n, u, group_concat(c, ',') FROM (SELECT m.name AS t, CASE l.origin WHEN 'c' THEN l.name ELSE '(' || l.origin || ')' END AS n, ` +
			`l."unique" AS u, i.name AS c ` + tables + `pragma_index_list(m.name) l JOIN pragma_index_info(l.name) i` + only +
			` ORDER BY m.name, l.name, i.seqno) GROUP BY t, n, u`},
		{"foreign key", `SELECT m.name, f."from", f."table", f."to", f.on_update, f.on_delete ` + tables + `pragma_foreign_key_list(m.name) f` + only},
		{"alembic", `SELECT version_num FROM alembic_version`},
	}
}

// mysqlDescribe reads information_schema for the connection's database.
func mysqlDescribe() []describeQuery {
	const here = ` WHERE table_schema = DATABASE()`
	return []describeQuery{
		{"table", `SELECT table_name, engine, table_collation FROM information_schema.tables` + here},
		{"column", `SELECT table_name, ordinal_position, column_name, column_type, is_nullable, column_default, extra, collation_name FROM information_schema.columns` + here},
		{"index", `SELECT table_name, index_name, non_unique, group_concat(column_name ORDER BY seq_in_index) FROM information_schema.statistics` + here +
			` GROUP BY table_name, index_name, non_unique`},
		{"foreign key", `SELECT table_name, constraint_name, column_name, referenced_table_name, referenced_column_name FROM information_schema.key_column_usage` +
			here + ` AND referenced_table_name IS NOT NULL`},
		{"alembic", `SELECT version_num FROM alembic_version`},
	}
}

// describeRows runs query and writes each row as kind and its values.
func describeRows(ctx context.Context, db *sql.DB, kind, query string) ([]string, error) {
	rows, err := db.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out []string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		line := kind
		for _, v := range vals {
			s := "NULL"
			if v.Valid {
				s = v.String
			}
			line += " " + s
		}
		out = append(out, line)
	}
	return out, rows.Err()
}

// sqliteConstraintNames lists each table's named constraints.
func sqliteConstraintNames(ctx context.Context, db *sql.DB) ([]string, error) {
	rows, err := db.QueryContext(ctx, `SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`)
	if err != nil {
		return nil, fmt.Errorf("describe constraints: %w", err)
	}
	defer rows.Close()
	constraintName := regexp.MustCompile(`(?i)\bCONSTRAINT\s+["` + "`" + `]?(\w+)`)
	var out []string
	for rows.Next() {
		var table, ddl string
		if err := rows.Scan(&table, &ddl); err != nil {
			return nil, fmt.Errorf("describe constraints: %w", err)
		}
		for _, m := range constraintName.FindAllStringSubmatch(ddl, -1) {
			out = append(out, "constraint "+table+" "+strings.ToLower(m[1]))
		}
	}
	return out, rows.Err()
}
