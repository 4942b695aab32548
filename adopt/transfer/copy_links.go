package transfer

import (
	"context"
	"fmt"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

func (c *copier) inventories() error {
	for _, r := range c.src.Inventories {
		where := fmt.Sprintf("inventory (provider %d, class %d)", r.ProviderID, r.ClassID)
		row := r
		var err error
		if row.ProviderID, err = lookup(c.providers, r.ProviderID, "provider", where); err != nil {
			return err
		}
		if row.ClassID, err = lookup(c.classes, r.ClassID, "resource class", where); err != nil {
			return err
		}
		row.CreatedAt = c.created(r.CreatedAt)
		if err := c.tx.InsertInventory(c.ctx, row); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
	}
	c.done("inventories", len(c.src.Inventories))
	return nil
}

func (c *copier) providerTraits() error {
	for _, r := range c.src.ProviderTraits {
		where := fmt.Sprintf("provider trait (provider %d, trait %d)", r.ProviderID, r.TraitID)
		p, err := lookup(c.providers, r.ProviderID, "provider", where)
		if err != nil {
			return err
		}
		t, err := lookup(c.traits, r.TraitID, "trait", where)
		if err != nil {
			return err
		}
		if err := c.tx.AddProviderTrait(c.ctx, p, t); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
	}
	c.done("resource_provider_traits", len(c.src.ProviderTraits))
	return nil
}

func (c *copier) aggregateRows() error {
	c.aggregates = make(map[int64]int64, len(c.src.Aggregates))
	for _, r := range c.src.Aggregates {
		id, ok := c.keep.aggregates[r.UUID]
		if !ok {
			var err error
			if id, err = c.tx.InsertAggregate(c.ctx, r.UUID); err != nil {
				return fmt.Errorf("aggregate %s: %w", r.UUID, err)
			}
		}
		c.aggregates[r.ID] = id
	}
	c.done("placement_aggregates", len(c.src.Aggregates))
	for _, r := range c.src.ProviderAggregates {
		where := fmt.Sprintf("provider aggregate (provider %d, aggregate %d)", r.ProviderID, r.AggregateID)
		p, err := lookup(c.providers, r.ProviderID, "provider", where)
		if err != nil {
			return err
		}
		a, err := lookup(c.aggregates, r.AggregateID, "aggregate", where)
		if err != nil {
			return err
		}
		if err := c.tx.AddProviderAggregate(c.ctx, p, a); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
	}
	c.done("resource_provider_aggregates", len(c.src.ProviderAggregates))
	return nil
}

// owners copies projects, users and consumer types.
func (c *copier) owners() error {
	var err error
	if c.projects, err = c.externalIDs("projects", c.src.Projects, c.keep.projects, c.tx.InsertProject); err != nil {
		return err
	}
	if c.users, err = c.externalIDs("users", c.src.Users, c.keep.users, c.tx.InsertUser); err != nil {
		return err
	}
	c.consumerTypes = make(map[int64]int64, len(c.src.ConsumerTypes))
	for _, r := range c.src.ConsumerTypes {
		id, ok := c.keep.consumerTypes[r.Name]
		if !ok {
			row := r
			row.CreatedAt = c.created(r.CreatedAt)
			if id, err = c.tx.InsertConsumerType(c.ctx, row); err != nil {
				return fmt.Errorf("consumer type %s: %w", r.Name, err)
			}
		}
		c.consumerTypes[r.ID] = id
	}
	c.done("consumer_types", len(c.src.ConsumerTypes))
	return nil
}

func (c *copier) externalIDs(table string, rows []store.ExternalIDRow, keep map[string]int64, insert func(ctx context.Context, id string) (int64, error)) (map[int64]int64, error) {
	m := make(map[int64]int64, len(rows))
	for _, r := range rows {
		id, ok := keep[r.ExternalID]
		if !ok {
			var err error
			if id, err = insert(c.ctx, r.ExternalID); err != nil {
				return nil, fmt.Errorf("%s %s: %w", table, r.ExternalID, err)
			}
		}
		m[r.ID] = id
	}
	c.done(table, len(rows))
	return m, nil
}

func (c *copier) consumerRows() error {
	c.consumers = make(map[int64]int64, len(c.src.Consumers))
	for _, r := range c.src.Consumers {
		where := "consumer " + r.UUID
		row := r
		var err error
		if row.ProjectID, err = lookup(c.projects, r.ProjectID, "project", where); err != nil {
			return err
		}
		if row.UserID, err = lookup(c.users, r.UserID, "user", where); err != nil {
			return err
		}
		if r.ConsumerTypeID != 0 {
			if row.ConsumerTypeID, err = lookup(c.consumerTypes, r.ConsumerTypeID, "consumer type", where); err != nil {
				return err
			}
		}
		row.CreatedAt = c.created(r.CreatedAt)
		id, err := c.tx.InsertConsumer(c.ctx, row)
		if err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		c.consumers[r.ID] = id
	}
	c.done("consumers", len(c.src.Consumers))
	return nil
}

func (c *copier) allocations() error {
	for _, r := range c.src.Allocations {
		where := fmt.Sprintf("allocation %d", r.ID)
		row := r
		var err error
		if row.ProviderID, err = lookup(c.providers, r.ProviderID, "provider", where); err != nil {
			return err
		}
		if row.ConsumerID, err = lookup(c.consumers, r.ConsumerID, "consumer", where); err != nil {
			return err
		}
		if row.ClassID, err = lookup(c.classes, r.ClassID, "resource class", where); err != nil {
			return err
		}
		row.CreatedAt = c.created(r.CreatedAt)
		if _, err := c.tx.InsertAllocation(c.ctx, row); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
	}
	c.done("allocations", len(c.src.Allocations))
	return nil
}
