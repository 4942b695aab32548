package ledger

import (
	"context"
	"fmt"
	"time"

	"github.com/placement-syncd/placement-syncd/placementsrv/standard"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// seedStandard inserts every standard resource class and trait that recs
// lack, in one transaction, and adds the new rows to recs. As Placement's
// startup sync it never deletes. A standard class's id is its index in the
// standard list; a class whose name or id is already taken is skipped.
func seedStandard(ctx context.Context, be store.Backend, recs *store.Records, now time.Time) error {
	classNames := make(map[string]bool, len(recs.ResourceClasses))
	classIDs := make(map[int64]bool, len(recs.ResourceClasses))
	for _, c := range recs.ResourceClasses {
		classNames[c.Name], classIDs[c.ID] = true, true
	}
	var classes []store.ResourceClassRow
	for id, name := range standard.ResourceClasses() {
		if !classNames[name] && !classIDs[int64(id)] {
			classes = append(classes, store.ResourceClassRow{ID: int64(id), Name: name, CreatedAt: now})
			classNames[name], classIDs[int64(id)] = true, true
		}
	}
	traitNames := make(map[string]bool, len(recs.Traits))
	for _, t := range recs.Traits {
		traitNames[t.Name] = true
	}
	var traits []store.TraitRow
	for _, name := range standard.Traits() {
		if !traitNames[name] {
			traits = append(traits, store.TraitRow{Name: name, CreatedAt: now})
			traitNames[name] = true
		}
	}
	if len(classes) == 0 && len(traits) == 0 {
		return nil
	}
	tx, err := be.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	for _, c := range classes {
		if err := tx.InsertResourceClass(ctx, c); err != nil {
			return fmt.Errorf("resource class %s: %w", c.Name, err)
		}
	}
	for i := range traits {
		if traits[i].ID, err = tx.InsertTrait(ctx, traits[i]); err != nil {
			return fmt.Errorf("trait %s: %w", traits[i].Name, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	recs.ResourceClasses = append(recs.ResourceClasses, classes...)
	recs.Traits = append(recs.Traits, traits...)
	return nil
}
