package store

import "fmt"

// SchemaError is a database whose schema version the binary cannot use
// as is: newer than the binary's, or older and not migrated. It matches
// ErrSchemaTooNew or ErrSchemaTooOld, and carries both versions so that a
// caller can explain the refusal without reading the database again.
type SchemaError struct {
	// Database is how the backend names the database in its message.
	Database string
	// Current is the database's schema version, Latest the binary's.
	Current, Latest int
}

func (e *SchemaError) Error() string {
	if e.Current > e.Latest {
		return fmt.Sprintf("database %s has schema version %d, newer than this binary's %d: %v", e.Database, e.Current, e.Latest, ErrSchemaTooNew)
	}
	return fmt.Sprintf("database %s has schema version %d, older than this binary's %d: run 'placement-syncd db migrate': %v",
		e.Database, e.Current, e.Latest, ErrSchemaTooOld)
}

// Unwrap is the sentinel the version difference selects.
func (e *SchemaError) Unwrap() error {
	if e.Current > e.Latest {
		return ErrSchemaTooNew
	}
	return ErrSchemaTooOld
}
