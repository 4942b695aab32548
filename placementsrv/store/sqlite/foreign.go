package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// OpenForeignReadOnly opens an SQLite file written by another program
// (OpenStack Placement's own database, for 'db import') read-only: the
// file is never written, not even its journal. The caller reads inside
// one transaction for a consistent view, and closes the handle.
func OpenForeignReadOnly(ctx context.Context, path string) (*sql.DB, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	db, err := sql.Open("sqlite3", fileURI(path)+"?mode=ro&_query_only=true")
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	return db, nil
}

// ErrExists reports that CreateForeign was given a file that exists.
var ErrExists = errors.New("file exists")

// CreateForeign creates a new SQLite file for another program's schema
// (OpenStack Placement's, for 'db export'); an existing file is refused
// with ErrExists so that nothing is overwritten. The rollback journal
// stays SQLite's default, as the other program expects.
func CreateForeign(ctx context.Context, path string) (*sql.DB, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("create database %s: %w", path, ErrExists)
	}
	if err != nil {
		return nil, fmt.Errorf("create database %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("create database %s: %w", path, err)
	}
	db, err := sql.Open("sqlite3", fileURI(path)+"?_foreign_keys=on&_synchronous=FULL")
	if err != nil {
		return nil, fmt.Errorf("create database %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("create database %s: %w", path, err)
	}
	return db, nil
}
