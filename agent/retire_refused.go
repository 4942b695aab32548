package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/placement-syncd/placement-syncd/drivers"
	"github.com/placement-syncd/placement-syncd/placementclient"
)

// refuseRetirement leaves the vanished providers in place. Past the
// limit they are reserved in full: a vanished node must not stay an
// allocation candidate while the operator decides, and a reservation is
// undone by the next pass that observes the node again. An empty answer
// reserves nothing: a source that lists nothing has far more likely
// failed than lost every node, and reserving the whole fleet would stop
// all scheduling on it.
func (a *Agent) refuseRetirement(ctx context.Context, rt retirement, r *Result) []error {
	r.RetireRefused = rt.reason
	a.metrics.retireRefused.WithLabelValues(rt.driver, rt.reason).Inc()
	var errs []error
	wrote := 0
	if rt.reason == RetireRefusedLimit {
		for _, u := range rt.vanished {
			w, err := a.holdRefused(ctx, rt.driver, u)
			switch {
			case err != nil:
				errs = append(errs, fmt.Errorf("reserve vanished provider %s: %w", u, err))
			case w:
				wrote++
			}
		}
	}
	r.Writes += wrote
	r.Held = a.heldCount(rt.vanished)
	a.log.Warn("vanished providers not retired; nothing deleted", zap.String("driver", rt.driver),
		zap.String("reason", rt.reason), zap.String("detail", rt.detail), zap.Int("vanished", len(rt.vanished)),
		zap.Int("reserved_in_full", r.Held), zap.Int("reserved_now", wrote),
		zap.String("recovery", "if the nodes are gone for good: placement-syncd agent --config FILE --once --max-retirements 100% (try --dry-run first)"))
	return errs
}

// holdRefused reserves one vanished provider in full while its
// retirement is refused; one reserved already is not read again until
// its periodic re-read is due. A provider deleted meanwhile (by hand) is
// no longer this agent's to retire.
func (a *Agent) holdRefused(ctx context.Context, driver, uuid string) (wrote bool, err error) {
	now := time.Now()
	a.mu.Lock()
	at, ok := a.held[uuid]
	a.mu.Unlock()
	if ok && !refreshDue(uuid, at, now, a.opts.RefreshInterval) {
		return false, nil
	}
	wrote, err = a.reserveAll(ctx, uuid)
	switch {
	case placementclient.IsNotFound(err):
		a.forget(uuid)
		a.reported.remove(driver, uuid)
		return false, nil
	case err != nil:
		return false, err
	}
	if wrote {
		a.wroteRetirement("reserve", driver, "reserved_refused")
		a.log.Info("vanished provider reserved in full: its retirement is refused", zap.String("driver", driver), zap.String("provider", uuid))
	}
	a.mu.Lock()
	a.held[uuid] = now
	a.mu.Unlock()
	return wrote, nil
}

// heldCount counts the providers among uuids reserved by a refusal.
func (a *Agent) heldCount(uuids []string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, u := range uuids {
		if _, ok := a.held[u]; ok {
			n++
		}
	}
	return n
}

// releaseHeld forgets the refusal reservation of the providers the tree
// observes again: the pass's sync releases them as any other provider.
func (a *Agent) releaseHeld(tree *drivers.Tree) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, p := range tree.Providers {
		delete(a.held, p.UUID)
	}
	for _, u := range tree.Keep {
		delete(a.held, u)
	}
}

// retirementPlan is what the pass would do with the vanished providers,
// for DryRun: the refusal, if any, and one line per write. It reads
// Placement and writes nothing.
func (a *Agent) retirementPlan(ctx context.Context, rt retirement) (refusal string, writes []string, err error) {
	if rt.reason != "" {
		refusal = "retirement refused (" + rt.reason + "): " + rt.detail + "; nothing deleted"
		if rt.reason != RetireRefusedLimit {
			return refusal, nil, nil
		}
	}
	var errs []error
	for _, u := range rt.vanished {
		line, err := a.retirementLine(ctx, u, rt.reason != "")
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("vanished provider %s: %w", u, err))
		case line != "":
			writes = append(writes, line)
		}
	}
	return refusal, writes, errors.Join(errs...)
}

// retirementLine is the write a pass would make for one vanished
// provider, "" for none (gone already, or reserved in full already).
func (a *Agent) retirementLine(ctx context.Context, uuid string, refused bool) (string, error) {
	why := "vanished from the source, retirement refused"
	if !refused {
		u, err := a.pc.GetUsages(ctx, uuid)
		if placementclient.IsNotFound(err) {
			return "", nil
		}
		if err != nil {
			return "", err
		}
		if !inUse(u.Usages) {
			return "delete provider " + uuid + ": vanished from the source, no allocations", nil
		}
		why = "vanished from the source, has allocations"
	}
	inv, err := a.pc.GetInventories(ctx, uuid)
	if placementclient.IsNotFound(err) || (err == nil && fullyReserved(inv.Inventories)) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return "reserve inventories of " + uuid + " in full: " + why, nil
}
