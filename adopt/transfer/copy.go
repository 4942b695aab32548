package transfer

import (
	"context"
	"fmt"
	"time"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// copier writes the source's rows in the order their references need,
// mapping the source's ids to the ones the backend assigns.
type copier struct {
	ctx      context.Context
	tx       store.Tx
	src      *store.Records
	keep     *kept
	now      time.Time
	progress func(string, int)
	counts   []Count

	classes, traits, providers, aggregates, projects, users, consumerTypes, consumers map[int64]int64
}

func (c *copier) done(table string, n int) {
	c.counts = append(c.counts, Count{Table: table, Rows: n})
	if c.progress != nil {
		c.progress(table, n)
	}
}

// created is a row's creation time, the import's when the source has none.
func (c *copier) created(t time.Time) time.Time {
	if t.IsZero() {
		return c.now
	}
	return t
}

func (c *copier) run() error {
	steps := []func() error{c.classesAndTraits, c.providerRows, c.inventories, c.providerTraits,
		c.aggregateRows, c.owners, c.consumerRows, c.allocations}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// lookup maps a source id through m, naming what is missing.
func lookup(m map[int64]int64, id int64, what, where string) (int64, error) {
	v, ok := m[id]
	if !ok {
		return 0, fmt.Errorf("%s: %s %d does not exist in the source", where, what, id)
	}
	return v, nil
}

func (c *copier) classesAndTraits() error {
	c.classes = make(map[int64]int64, len(c.src.ResourceClasses))
	for _, r := range c.src.ResourceClasses {
		r.CreatedAt = c.created(r.CreatedAt)
		if err := c.tx.InsertResourceClass(c.ctx, r); err != nil {
			return fmt.Errorf("resource class %s (id %d): %w", r.Name, r.ID, err)
		}
		c.classes[r.ID] = r.ID
	}
	c.done("resource_classes", len(c.src.ResourceClasses))
	c.traits = make(map[int64]int64, len(c.src.Traits))
	for _, r := range c.src.Traits {
		r.CreatedAt = c.created(r.CreatedAt)
		id, err := c.tx.InsertTrait(c.ctx, r)
		if err != nil {
			return fmt.Errorf("trait %s: %w", r.Name, err)
		}
		c.traits[r.ID] = id
	}
	c.done("traits", len(c.src.Traits))
	return nil
}

// providerRows inserts providers in source id order. A parent or root
// with a larger id (a provider moved under a newer one, microversion
// 1.37) is linked once every provider exists.
func (c *copier) providerRows() error {
	c.providers = make(map[int64]int64, len(c.src.Providers))
	var later []store.ProviderRow
	for _, r := range c.src.Providers {
		row := r
		row.CreatedAt = c.created(r.CreatedAt)
		parent, pok := c.providers[r.ParentID]
		root, rok := c.providers[r.RootID]
		row.ParentID, row.RootID = parent, root
		if (r.ParentID != 0 && !pok) || (r.RootID != 0 && r.RootID != r.ID && !rok) {
			row.ParentID, row.RootID = 0, 0
			later = append(later, r)
		}
		if r.RootID == r.ID {
			row.RootID = 0 // itself
		}
		id, err := c.tx.InsertProvider(c.ctx, row)
		if err != nil {
			return fmt.Errorf("resource provider %s (%s): %w", r.UUID, r.Name, err)
		}
		c.providers[r.ID] = id
	}
	for _, r := range later {
		var err error
		row := r
		if row.ID, err = lookup(c.providers, r.ID, "provider", "provider "+r.UUID); err != nil {
			return err
		}
		if row.ParentID, err = lookup(c.providers, r.ParentID, "parent provider", "provider "+r.UUID); err != nil && r.ParentID != 0 {
			return err
		}
		if row.RootID, err = lookup(c.providers, r.RootID, "root provider", "provider "+r.UUID); err != nil {
			return err
		}
		if err := c.tx.UpdateProvider(c.ctx, row); err != nil {
			return fmt.Errorf("resource provider %s: link to its tree: %w", r.UUID, err)
		}
	}
	c.done("resource_providers", len(c.src.Providers))
	return nil
}
