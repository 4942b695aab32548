package dbstore

import (
	"context"
	"database/sql"
	"fmt"
	"os"

	"github.com/placement-syncd/placement-syncd/internal/dburl"
	"github.com/placement-syncd/placement-syncd/placementsrv/store/sqlite"
)

// Locate is the database a configuration names: the URL connection when
// it is set, else the SQLite file at path. It is where a configured
// database URL is parsed; errors are dburl's.
func Locate(connection, path string) (*dburl.URL, error) {
	if connection == "" {
		return FileURL(path), nil
	}
	return dburl.Parse(connection)
}

// FileURL names the SQLite file at path.
func FileURL(path string) *dburl.URL {
	return &dburl.URL{Driver: dburl.SQLite, Path: path}
}

// File is the local file that holds the database u names, or "" for a
// database on a server.
func File(u *dburl.URL) string {
	if u.Driver != dburl.SQLite {
		return ""
	}
	return u.Path
}

// Name is how messages name the database u names: a file by its path, a
// database on a server by its URL without the password.
func Name(u *dburl.URL) string {
	if f := File(u); f != "" {
		return f
	}
	return u.String()
}

// Stat tells whether the database u names exists before anything opens
// it, since opening a file that does not exist creates it: the error of
// os.Stat for a file, nil for a database on a server, whose existence
// only connecting to it tells.
func Stat(u *dburl.URL) error {
	f := File(u)
	if f == "" {
		return nil
	}
	_, err := os.Stat(f)
	return err
}

// OpenForeign opens the database u names for another program's schema
// (OpenStack Placement's, for 'db import' and 'db export'): a file
// read-only, or created new when create is set (an existing one is
// refused); a database on a server as it is, connected once to report a
// wrong address now.
func OpenForeign(ctx context.Context, u *dburl.URL, create bool) (*sql.DB, error) {
	if f := File(u); f != "" {
		if create {
			return sqlite.CreateForeign(ctx, f)
		}
		return sqlite.OpenForeignReadOnly(ctx, f)
	}
	db, err := sql.Open("mysql", u.DSN())
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", u, err)
	}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("connect to %s: %w", u, err)
	}
	return db, nil
}
