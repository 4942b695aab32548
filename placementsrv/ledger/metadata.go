package ledger

import "context"

// Metadata reads a fact the database keeps about itself (names in
// store/metadata.go); it is not a record, so no rule and no change feed
// is involved.
func (l *Ledger) Metadata(ctx context.Context, name string) (string, bool, error) {
	return l.be.Metadata(ctx, name)
}

// SetMetadata stores a fact about the database.
func (l *Ledger) SetMetadata(ctx context.Context, name, value string) error {
	return l.be.SetMetadata(ctx, name, value)
}
