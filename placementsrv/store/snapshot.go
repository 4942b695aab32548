package store

import (
	"context"

	"github.com/placement-syncd/placement-syncd/placementsrv/readmodel"
)

// SnapshotStore gives the read model allocation candidates are computed
// from.
type SnapshotStore interface {
	// Snapshot returns a snapshot that reflects at least every write
	// committed before the call started.
	Snapshot(ctx context.Context) (*readmodel.Snapshot, error)
}
