package mysql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"

	"github.com/go-sql-driver/mysql"
)

// session is a write transaction on a connection of the writers' pool,
// whose sessions run with autocommit off: the transaction begins on the
// server with its first statement, so beginning costs no round trip of
// its own (the driver sends START TRANSACTION alone, and a write waits
// for it). COMMIT and ROLLBACK are statements. A connection whose
// transaction did not end cleanly is dropped from the pool, so none is
// handed to another writer with a transaction open; the server rolls
// back what a closed connection left. The pool allows statement batches,
// for a change's insert and COMMIT in one round trip (commitWith).
type session struct {
	ctx  context.Context
	conn *sql.Conn
	done bool
}

func (b *Backend) beginSession(ctx context.Context) (*session, error) {
	conn, err := b.wdb.Conn(ctx)
	if err != nil {
		return nil, err
	}
	return &session{ctx: ctx, conn: conn}, nil
}

func (s *session) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if s.done {
		return nil, sql.ErrTxDone
	}
	return s.conn.ExecContext(ctx, query, args...)
}

func (s *session) Commit() error   { return s.end("COMMIT") }
func (s *session) Rollback() error { return s.end("ROLLBACK") }

// end runs COMMIT or ROLLBACK.
func (s *session) end(stmt string) error {
	return s.finish(func() error {
		_, err := s.conn.ExecContext(s.ctx, stmt)
		return err
	})
}

// commitWith runs query (one statement with args) and COMMIT as one batch
// and returns the id query inserted. The server stops a batch at its
// first error, so COMMIT runs only after query succeeded.
func (s *session) commitWith(ctx context.Context, query string, args ...any) (int64, error) {
	named := make([]driver.NamedValue, len(args))
	for i, a := range args {
		named[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
	}
	var id int64
	err := s.finish(func() error {
		return s.conn.Raw(func(dc any) error {
			ex, ok := dc.(driver.ExecerContext)
			if !ok {
				return fmt.Errorf("driver connection %T cannot run a statement batch", dc)
			}
			res, err := ex.ExecContext(ctx, query+"; COMMIT", named)
			if err != nil {
				return err
			}
			r, ok := res.(mysql.Result)
			if !ok || len(r.AllLastInsertIds()) != 2 {
				return fmt.Errorf("a statement batch answered %T, not two results", res)
			}
			id = r.AllLastInsertIds()[0]
			return nil
		})
	})
	return id, err
}

// finish ends the transaction with run and gives the connection back;
// after the first end every other is sql.ErrTxDone, as for a *sql.Tx.
func (s *session) finish(run func() error) error {
	if s.done {
		return sql.ErrTxDone
	}
	s.done = true
	err := run()
	if err != nil {
		// Its transaction's fate is unknown: never reuse it.
		_ = s.conn.Raw(func(any) error { return driver.ErrBadConn })
	}
	_ = s.conn.Close()
	return err
}
