package sqlite

import (
	"errors"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// errTODO marks methods still being written; each family removes its
// stubs_<family>.go file when done, and this file goes with the last one.
var errTODO = errors.New("not implemented")

var _ store.Store = (*Store)(nil)
