package mysql

import (
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
	"github.com/placement-syncd/placement-syncd/placementsrv/store/sqlrows"
)

// tx is the shared record operations over MySQL's errors (errors.go),
// plus the change feed's AppendChange (feed.go).
type tx struct {
	*sqlrows.Tx[mysqlErrors]
	s *session
}

// mysqlErrors classifies MySQL's errors: duplicates, and conflicts worth
// running the transaction again (store.ErrRetry).
type mysqlErrors struct{}

func (mysqlErrors) Classify(err error) error { return classify(err) }

// tx implements the transaction contract.
var _ store.Tx = (*tx)(nil)
