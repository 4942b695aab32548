package store

// Metadata names, the facts a Backend keeps about its database
// (Backend.Metadata).
const (
	// MetaServedRelease is the upstream Placement release (api.release)
	// the database was last served under by a configuration that named
	// it, or by one that found the database new. A later start under
	// another release, by default rather than by choice, is worth a
	// warning: the same tokens may then get 403s.
	MetaServedRelease = "served_release"
)
