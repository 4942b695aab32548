package audit

import (
	"context"
	"errors"
	"maps"
	"slices"

	"github.com/placement-syncd/placement-syncd/novaclient"
)

// Nova reads the records in Nova that hold allocations (novaclient's
// compute API, file or cell databases). An error means nothing could be
// read; records with Partial set were read in part.
type Nova interface {
	Records(ctx context.Context) (novaclient.Records, error)
}

// ErrRefused is returned when the mass-removal guard stopped --delete.
var ErrRefused = errors.New("refused")

// readNova reads every configured source and merges them: a record any
// source holds is known. A source that fails makes the view partial; all
// failing is an error.
func readNova(ctx context.Context, sources []Nova) (novaclient.Records, error) {
	if len(sources) == 0 {
		return novaclient.Records{}, ErrNoSource
	}
	v := novaclient.NewRecords()
	var errs []error
	for _, s := range sources {
		got, err := s.Records(ctx)
		if err != nil {
			errs = append(errs, err)
			v.Partial = append(v.Partial, err.Error())
			continue
		}
		v.Merge(got)
	}
	if len(errs) == len(sources) {
		return novaclient.Records{}, errors.Join(errs...)
	}
	return v, nil
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
