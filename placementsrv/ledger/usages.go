package ledger

import (
	"context"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// ProviderUsages reports usage for every class the provider has inventory
// of; allocations of other classes do not show, as upstream's inventory
// join.
func (l *Ledger) ProviderUsages(ctx context.Context, uuid string) (store.Provider, map[string]int64, error) {
	return readProvider(l, uuid, func(rp *provider) map[string]int64 {
		out := make(map[string]int64, len(rp.inventories))
		for rc := range rp.inventories {
			out[rc.name] = rp.usage[rc]
		}
		return out
	})
}

// TotalUsages sums the allocations of a project's (and optionally a
// user's) consumers, grouped as the filter asks.
func (l *Ledger) TotalUsages(ctx context.Context, f store.UsageFilter) (map[string]store.TypeUsage, error) {
	out := map[string]store.TypeUsage{}
	err := l.read(func(st *state) error {
		for _, c := range st.consumers {
			if c.projectID != f.ProjectID || (f.UserID != "" && c.userID != f.UserID) || len(c.allocs) == 0 {
				continue
			}
			group, ok := usageGroup(c, f.ConsumerType)
			if !ok {
				continue
			}
			tu, seen := out[group]
			if !seen {
				tu.Usages = map[string]int64{}
			}
			tu.ConsumerCount++
			for _, a := range c.allocs {
				tu.Usages[a.class.name] += a.used
			}
			out[group] = tu
		}
		return nil
	})
	return out, err
}

// usageGroup names the group consumer c counts in under the consumer type
// filter, or reports that c is filtered out.
func usageGroup(c *consumer, filter string) (string, bool) {
	ctype := c.consumerType
	if ctype == "" {
		ctype = "unknown"
	}
	switch filter {
	case "":
		return ctype, true
	case "all":
		return "all", true
	case "unknown":
		return "unknown", c.consumerType == ""
	default:
		return ctype, c.consumerType == filter
	}
}
