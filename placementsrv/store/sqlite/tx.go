package sqlite

import (
	"errors"

	"github.com/mattn/go-sqlite3"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// sqliteErrors reports a unique constraint as ErrDuplicate; Begin runs
// the shared record operations (sqlrows.Tx) over it.
type sqliteErrors struct{}

func (sqliteErrors) Classify(err error) error { return constraintError(err) }

// duplicateError is a unique or primary key violation: it reads as
// SQLite's message and matches store.ErrDuplicate.
type duplicateError struct{ err error }

func (e duplicateError) Error() string        { return e.err.Error() }
func (e duplicateError) Unwrap() error        { return e.err }
func (e duplicateError) Is(target error) bool { return target == store.ErrDuplicate }

func constraintError(err error) error {
	var se sqlite3.Error
	if errors.As(err, &se) && (se.ExtendedCode == sqlite3.ErrConstraintUnique || se.ExtendedCode == sqlite3.ErrConstraintPrimaryKey) {
		return duplicateError{err}
	}
	return err
}

// InsertProvider inserts the row, then sets its tree links, which for a
// root name the new id.
