package ledger

import "github.com/placement-syncd/placement-syncd/placementsrv/store"

// readRecord finds key with find and returns its record, under the read
// lock; find's error (not found) is returned as is.
func readRecord[T, R any](l *Ledger, key string, find func(*state, string) (T, error), record func(T) R) (R, error) {
	var out R
	err := l.read(func(st *state) error {
		v, err := find(st, key)
		if err != nil {
			return err
		}
		out = record(v)
		return nil
	})
	return out, err
}

// readProvider returns the record of provider uuid and what view makes of
// it, under the read lock.
func readProvider[T any](l *Ledger, uuid string, view func(*provider) T) (store.Provider, T, error) {
	var p store.Provider
	var out T
	err := l.read(func(st *state) error {
		rp, err := st.lookupProvider(uuid)
		if err != nil {
			return err
		}
		p, out = rp.record(), view(rp)
		return nil
	})
	return p, out, err
}
