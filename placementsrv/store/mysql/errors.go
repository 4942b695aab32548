package mysql

import (
	"errors"

	"github.com/go-sql-driver/mysql"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// Server error numbers the backend maps to the contract's kinds.
const (
	errDupEntry              = 1062 // ER_DUP_ENTRY
	errDupKey                = 1022 // ER_DUP_KEY
	errLockWaitTimeout       = 1205 // ER_LOCK_WAIT_TIMEOUT
	errLockDeadlock          = 1213 // ER_LOCK_DEADLOCK (also Galera's certification failure)
	errUnknownCom            = 1047 // ER_UNKNOWN_COM_ERROR: "WSREP has not yet prepared node for application use"
	errErrorDuringCommit     = 1180 // ER_ERROR_DURING_COMMIT
	errNotSupportedYet       = 1235 // ER_NOT_SUPPORTED_YET: GET_LOCK on some Galera releases
	errUnknownSystemVariable = 1193 // ER_UNKNOWN_SYSTEM_VARIABLE
)

// kindError gives a server error a contract kind: it reads as the
// server's message and matches kind.
type kindError struct {
	err  error
	kind error
}

func (e kindError) Error() string        { return e.err.Error() }
func (e kindError) Unwrap() error        { return e.err }
func (e kindError) Is(target error) bool { return target == e.kind }

// classify maps a server error to ErrDuplicate or ErrRetry; others come
// back as they are.
func classify(err error) error {
	var me *mysql.MySQLError
	if !errors.As(err, &me) {
		return err
	}
	switch me.Number {
	case errDupEntry, errDupKey:
		return kindError{err, store.ErrDuplicate}
	case errLockWaitTimeout, errLockDeadlock, errUnknownCom, errErrorDuringCommit:
		return kindError{err, store.ErrRetry}
	}
	return err
}
