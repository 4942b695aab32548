package placementsrv

import "time"

// lastModified is upstream's pick_last_modified for one record: its update
// time, or its creation time when never updated.
func lastModified(created, updated time.Time) time.Time {
	if !updated.IsZero() {
		return updated
	}
	return created
}

// latest returns the later of a and b; a zero value loses.
func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
