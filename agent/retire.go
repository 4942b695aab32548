package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"go.uber.org/zap"

	"github.com/placement-syncd/placement-syncd/drivers"
	"github.com/placement-syncd/placement-syncd/internal/removallimit"
	"github.com/placement-syncd/placement-syncd/placementclient"
)

// DefaultMaxRetirements lets one pass retire a tenth of the reported
// providers, as reconciler.aggregates.max_removals bounds mirroring.
func DefaultMaxRetirements() removallimit.Limit { return removallimit.Limit{N: 10, Percent: true} }

// Reasons a retirement is refused (metric label).
const (
	RetireRefusedEmpty = "empty_answer"
	RetireRefusedLimit = "max_retirements"
)

// retireVanished retires the providers the driver reported before and
// no longer observes, as Nova deletes the compute node of a vanished
// Ironic node: one without allocations is deleted; one with allocations
// has its inventory reserved in full and stays reported until they go.
// An empty answer, or more vanished providers than the limit, retires
// nothing (a source that lost its nodes must not empty Placement).
func (a *Agent) retireVanished(ctx context.Context, d drivers.Driver, tree *drivers.Tree, r *Result) error {
	if _, ok := d.(drivers.Retiring); !ok {
		return nil
	}
	name := d.Name()
	seen := make(map[string]bool, len(tree.Providers))
	for _, p := range tree.Providers {
		seen[p.UUID] = true
	}
	known := a.reported.get(name)
	var vanished []string
	for u := range known {
		if !seen[u] {
			vanished = append(vanished, u)
		}
	}
	slices.Sort(vanished)
	if reason, detail := a.retireRefusal(len(tree.Providers), len(known), len(vanished)); reason != "" {
		r.RetireRefused = reason
		a.metrics.retireRefused.WithLabelValues(name, reason).Inc()
		a.log.Warn("vanished providers not retired; nothing deleted", zap.String("driver", name),
			zap.String("reason", reason), zap.String("detail", detail), zap.Int("vanished", len(vanished)))
		return a.reported.add(name, tree.Providers)
	}
	var errs []error
	for _, u := range vanished {
		gone, err := a.retire(ctx, name, u)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("retire provider %s: %w", u, err))
		case gone:
			r.Retired++
			a.metrics.retired.WithLabelValues(name, "deleted").Inc()
			a.log.Info("retired vanished provider: deleted", zap.String("driver", name), zap.String("provider", u))
			a.reported.remove(name, u)
		default:
			r.Retiring++
		}
	}
	a.metrics.retiring.WithLabelValues(name).Set(float64(r.Retiring))
	if err := a.reported.add(name, tree.Providers); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// retireRefusal is why vanished providers must not be retired now.
func (a *Agent) retireRefusal(observed, known, vanished int) (reason, detail string) {
	switch {
	case vanished == 0:
		return "", ""
	case observed == 0:
		return RetireRefusedEmpty, fmt.Sprintf("the source listed nothing, this agent reported %d", known)
	case vanished > a.opts.MaxRetirements.Allowed(known):
		return RetireRefusedLimit, fmt.Sprintf("%d of %d reported providers vanished, more than max_retirements %s (%d)",
			vanished, known, a.opts.MaxRetirements, a.opts.MaxRetirements.Allowed(known))
	}
	return "", ""
}

// retire deletes a vanished provider without allocations (gone), or
// reserves its whole inventory while allocations remain.
func (a *Agent) retire(ctx context.Context, driver, uuid string) (gone bool, err error) {
	u, err := a.pc.GetUsages(ctx, uuid)
	if placementclient.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	if !inUse(u.Usages) {
		err := a.pc.DeleteProvider(ctx, uuid)
		switch {
		case err == nil, placementclient.IsNotFound(err):
			a.forget(uuid)
			return true, nil
		case !errors.Is(err, placementclient.ErrProviderInUse):
			return false, err
		}
		// An allocation landed since the usages were read: reserve.
	}
	return false, a.reserveAll(ctx, driver, uuid)
}

func inUse(usages map[string]int) bool {
	for _, n := range usages {
		if n > 0 {
			return true
		}
	}
	return false
}

// reserveAll sets reserved = total on every inventory of the provider
// (generation-checked; a lost race is retried next pass).
func (a *Agent) reserveAll(ctx context.Context, driver, uuid string) error {
	inv, err := a.pc.GetInventories(ctx, uuid)
	if err != nil {
		return err
	}
	want := make(map[string]placementclient.Inventory, len(inv.Inventories))
	changed := false
	for rc, i := range inv.Inventories {
		changed = changed || i.Reserved != i.Total
		i.Reserved = i.Total
		want[rc] = i
	}
	if !changed {
		return nil
	}
	if _, err := a.pc.PutInventories(ctx, uuid, inv.Generation, want); err != nil {
		return err
	}
	a.metrics.retired.WithLabelValues(driver, "reserved").Inc()
	a.log.Info("vanished provider has allocations: inventory reserved in full until they go", zap.String("provider", uuid))
	return nil
}

// forget drops what the agent remembers of a deleted provider.
func (a *Agent) forget(uuid string) {
	a.mu.Lock()
	delete(a.cache, uuid)
	delete(a.owned, uuid)
	a.mu.Unlock()
}
