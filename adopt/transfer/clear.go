package transfer

import (
	"context"
	"fmt"
	"sort"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// kept are the target's rows the backend contract cannot delete
// (aggregates, projects, users, consumer types), by key: an import reuses
// a row whose key it needs and leaves the others unreferenced, where, as
// in Placement, no answer shows them.
type kept struct {
	aggregates, projects, users, consumerTypes map[string]int64
}

// clearTarget deletes every consumer (with its allocations), every
// provider (children first, with their links), then every trait and
// resource class, and returns the rows that remain.
func clearTarget(ctx context.Context, tx store.Tx, cur *store.Records) (*kept, error) {
	for _, c := range cur.Consumers {
		if err := tx.DeleteConsumer(ctx, c.ID); err != nil {
			return nil, fmt.Errorf("consumer %s: %w", c.UUID, err)
		}
	}
	for _, p := range leavesFirst(cur.Providers) {
		if err := tx.DeleteProvider(ctx, p.ID); err != nil {
			return nil, fmt.Errorf("provider %s: %w", p.UUID, err)
		}
	}
	for _, t := range cur.Traits {
		if err := tx.DeleteTrait(ctx, t.ID); err != nil {
			return nil, fmt.Errorf("trait %s: %w", t.Name, err)
		}
	}
	for _, c := range cur.ResourceClasses {
		if err := tx.DeleteResourceClass(ctx, c.ID); err != nil {
			return nil, fmt.Errorf("resource class %s: %w", c.Name, err)
		}
	}
	k := &kept{aggregates: map[string]int64{}, projects: map[string]int64{}, users: map[string]int64{}, consumerTypes: map[string]int64{}}
	for _, a := range cur.Aggregates {
		k.aggregates[a.UUID] = a.ID
	}
	for _, p := range cur.Projects {
		k.projects[p.ExternalID] = p.ID
	}
	for _, u := range cur.Users {
		k.users[u.ExternalID] = u.ID
	}
	for _, t := range cur.ConsumerTypes {
		k.consumerTypes[t.Name] = t.ID
	}
	return k, nil
}

// leavesFirst orders providers deepest first, so that each is deleted
// after its children.
func leavesFirst(ps []store.ProviderRow) []store.ProviderRow {
	parent := make(map[int64]int64, len(ps))
	for _, p := range ps {
		parent[p.ID] = p.ParentID
	}
	depth := func(id int64) int {
		d := 0
		for seen := 0; parent[id] != 0 && seen <= len(ps); seen++ {
			id, d = parent[id], d+1
		}
		return d
	}
	out := append([]store.ProviderRow(nil), ps...)
	depths := make(map[int64]int, len(ps))
	for _, p := range ps {
		depths[p.ID] = depth(p.ID)
	}
	sort.SliceStable(out, func(i, j int) bool { return depths[out[i].ID] > depths[out[j].ID] })
	return out
}
