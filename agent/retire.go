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

// retirement is one pass's decision on a Retiring driver's vanished
// providers: those it reported before and neither observes nor keeps.
type retirement struct {
	driver   string
	known    int
	vanished []string // sorted
	// reason and detail say why the retirement is refused ("": it is not).
	reason, detail string
}

// planRetirement finds the driver's vanished providers and whether they
// may be retired; ok is false for a driver that retires nothing.
func (a *Agent) planRetirement(d drivers.Driver, tree *drivers.Tree) (rt retirement, ok bool) {
	if _, ok := d.(drivers.Retiring); !ok {
		return retirement{}, false
	}
	rt.driver = d.Name()
	seen := make(map[string]bool, len(tree.Providers)+len(tree.Keep))
	for _, p := range tree.Providers {
		seen[p.UUID] = true
	}
	for _, u := range tree.Keep {
		seen[u] = true
	}
	known := a.reported.get(rt.driver)
	rt.known = len(known)
	for u := range known {
		if !seen[u] {
			rt.vanished = append(rt.vanished, u)
		}
	}
	slices.Sort(rt.vanished)
	rt.reason, rt.detail = a.retireRefusal(len(tree.Providers)+len(tree.Keep), rt.known, len(rt.vanished))
	return rt, true
}

// retireVanished retires the providers the driver reported before and
// no longer observes, as Nova deletes the compute node of a vanished
// Ironic node: one without allocations is deleted; one with allocations
// has its inventory reserved in full and stays reported until they go.
// An empty answer retires nothing; more vanished providers than the
// limit are reserved in full instead (see holdRefused). Providers the
// tree keeps are neither retired nor touched.
func (a *Agent) retireVanished(ctx context.Context, d drivers.Driver, tree *drivers.Tree, r *Result) error {
	rt, ok := a.planRetirement(d, tree)
	if !ok {
		return nil
	}
	a.releaseHeld(tree)
	var errs []error
	switch {
	case rt.reason != "":
		errs = a.refuseRetirement(ctx, rt, r)
	default:
		errs = a.retireAll(ctx, rt, r)
	}
	a.metrics.retiring.WithLabelValues(rt.driver).Set(float64(r.Retiring))
	a.metrics.held.WithLabelValues(rt.driver).Set(float64(a.heldCount(rt.vanished)))
	if err := a.reported.add(rt.driver, tree.Providers, tree.Keep); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// retireAll retires every vanished provider.
func (a *Agent) retireAll(ctx context.Context, rt retirement, r *Result) []error {
	var errs []error
	for _, u := range rt.vanished {
		gone, wrote, err := a.retire(ctx, rt.driver, u)
		if wrote {
			r.Writes++
		}
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("retire provider %s: %w", u, err))
		case gone:
			r.Retired++
			a.log.Info("retired vanished provider", zap.String("driver", rt.driver), zap.String("provider", u), zap.Bool("deleted", wrote))
			a.reported.remove(rt.driver, u)
		default:
			r.Retiring++
		}
	}
	return errs
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
// reserves its whole inventory while allocations remain. wrote says
// whether it wrote to Placement.
func (a *Agent) retire(ctx context.Context, driver, uuid string) (gone, wrote bool, err error) {
	u, err := a.pc.GetUsages(ctx, uuid)
	if placementclient.IsNotFound(err) {
		a.forget(uuid)
		return true, false, nil
	}
	if err != nil {
		return false, false, err
	}
	if !inUse(u.Usages) {
		err := a.pc.DeleteProvider(ctx, uuid)
		switch {
		case err == nil:
			a.wroteRetirement("delete", driver, "deleted")
			a.forget(uuid)
			return true, true, nil
		case placementclient.IsNotFound(err):
			a.forget(uuid)
			return true, false, nil
		case !errors.Is(err, placementclient.ErrProviderInUse):
			return false, false, err
		}
		// An allocation landed since the usages were read: reserve.
	}
	wrote, err = a.reserveAll(ctx, uuid)
	if wrote {
		a.wroteRetirement("reserve", driver, "reserved")
		a.log.Info("vanished provider has allocations: inventory reserved in full until they go", zap.String("provider", uuid))
	}
	if placementclient.IsNotFound(err) {
		a.forget(uuid)
		return true, false, nil
	}
	return false, wrote, err
}

// wroteRetirement counts one retirement write.
func (a *Agent) wroteRetirement(op, driver, action string) {
	a.metrics.writes.WithLabelValues(op).Inc()
	a.metrics.retired.WithLabelValues(driver, action).Inc()
}

func inUse(usages map[string]int) bool {
	for _, n := range usages {
		if n > 0 {
			return true
		}
	}
	return false
}

// fullyReserved reports whether every inventory is reserved in full.
func fullyReserved(invs map[string]placementclient.Inventory) bool {
	for _, i := range invs {
		if i.Reserved != i.Total {
			return false
		}
	}
	return true
}

// reserveAll sets reserved = total on every inventory of the provider
// (generation-checked; a lost race is retried next pass). wrote is
// false when it was reserved in full already.
func (a *Agent) reserveAll(ctx context.Context, uuid string) (wrote bool, err error) {
	inv, err := a.pc.GetInventories(ctx, uuid)
	if err != nil || fullyReserved(inv.Inventories) {
		return false, err
	}
	want := make(map[string]placementclient.Inventory, len(inv.Inventories))
	for rc, i := range inv.Inventories {
		i.Reserved = i.Total
		want[rc] = i
	}
	if _, err := a.pc.PutInventories(ctx, uuid, inv.Generation, want); err != nil {
		return false, err
	}
	// The cached state is no longer what Placement holds: should the
	// provider be observed again, it is re-read and released.
	a.uncache(uuid)
	return true, nil
}

// forget drops what the agent remembers of a deleted provider.
func (a *Agent) forget(uuid string) {
	a.mu.Lock()
	delete(a.cache, uuid)
	delete(a.owned, uuid)
	delete(a.held, uuid)
	a.cacheDirty = true
	a.mu.Unlock()
}

// uncache drops the provider's cached state only.
func (a *Agent) uncache(uuid string) {
	a.mu.Lock()
	if _, ok := a.cache[uuid]; ok {
		delete(a.cache, uuid)
		a.cacheDirty = true
	}
	a.mu.Unlock()
}
