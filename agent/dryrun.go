package agent

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/placement-syncd/placement-syncd/drivers"
	"github.com/placement-syncd/placement-syncd/placementclient"
)

// Plan is what one driver's pass would write.
type Plan struct {
	Driver string
	// Writes has one line per intended write, in the order a pass makes
	// them: custom classes and traits, then each group of providers
	// (written concurrently by a pass, listed here one after another in
	// the driver's order), each provider's create, traits, inventories
	// and aggregates, then the retirement of vanished providers (a
	// delete, or a reservation in full).
	Writes []string
	// Deferred has one line per provider left to the service that
	// reports it (it carries one of drivers.Provider.DeferTo): nothing
	// is written to it, so it has no line in Writes.
	Deferred []string
	// Refused, when set, says why vanished providers would not be
	// retired (max_retirements, an empty answer).
	Refused string
	// Err is why the plan is incomplete: the source could not be read,
	// Placement could not be, or some providers could not be (they are
	// left out, with the rest of their group).
	Err error
}

// DryRun plans one pass over every driver, as SyncOnce would make it, and
// writes nothing to Placement (nor to the state file).
func (a *Agent) DryRun(ctx context.Context) []Plan {
	a.passMu.Lock()
	defer a.passMu.Unlock()
	plans := make([]Plan, 0, len(a.opts.Drivers))
	for _, d := range a.opts.Drivers {
		plans = append(plans, a.dryRun(ctx, d))
	}
	return plans
}

// dryRun plans one driver's pass.
func (a *Agent) dryRun(ctx context.Context, d drivers.Driver) Plan {
	pl := Plan{Driver: d.Name()}
	tree, err := observeTree(ctx, d)
	if err != nil {
		pl.Err = err
		return pl
	}
	st, err := a.readTree(ctx, d.Name(), tree)
	if err != nil {
		pl.Err = err
		return pl
	}
	tp := a.planTree(tree, st)
	pl.Writes, pl.Deferred = tp.lines(), tp.deferredLines()
	errs := st.errs
	if rt, ok := a.planRetirement(d, tree); ok {
		refused, writes, err := a.retirementPlan(ctx, rt)
		pl.Refused, pl.Writes = refused, append(pl.Writes, writes...)
		errs = append(errs, err)
	}
	pl.Err = errors.Join(errs...)
	return pl
}

// lines describes the plan, one line per write.
func (tp treePlan) lines() []string {
	var out []string
	for _, rc := range tp.classes {
		out = append(out, "ensure resource class "+rc)
	}
	for _, tr := range tp.traits {
		out = append(out, "ensure trait "+tr)
	}
	for _, g := range tp.groups {
		for _, pp := range g {
			out = append(out, pp.lines()...)
		}
	}
	return out
}

// deferredLines describes the providers the plan leaves to the service
// that reports them, one line each, in the driver's order.
func (tp treePlan) deferredLines() []string {
	var out []string
	for _, g := range tp.groups {
		for _, pp := range g {
			if pp.deferredTo != "" {
				out = append(out, fmt.Sprintf("leave provider %q (%s) to the service that reports it: it carries %s; no writes",
					pp.p.Name, pp.p.UUID, pp.deferredTo))
			}
		}
	}
	return out
}

// lines describes one provider's writes.
func (pp providerPlan) lines() []string {
	var out []string
	name := fmt.Sprintf("%q (%s)", pp.p.Name, pp.p.UUID)
	if pp.create {
		line := "create provider " + name
		if pp.parent != "" {
			line += " under " + pp.parent
		}
		out = append(out, line)
	}
	if pp.traits != nil {
		out = append(out, "set traits of "+name+": "+setChange(pp.have.traits, pp.traits))
	}
	if pp.putInv {
		out = append(out, "set inventories of "+name+": "+pp.inventoryChange())
	}
	if pp.aggs != nil {
		out = append(out, "set aggregates of "+name+": "+setChange(pp.have.aggs, pp.aggs))
	}
	return out
}

// setChange describes replacing have with want: "+added -removed".
func setChange(have, want []string) string {
	var parts []string
	for _, v := range want {
		if !slices.Contains(have, v) {
			parts = append(parts, "+"+v)
		}
	}
	for _, v := range have {
		if !slices.Contains(want, v) {
			parts = append(parts, "-"+v)
		}
	}
	return strings.Join(parts, " ")
}

// inventoryChange describes an inventory write: each class added or
// changed with its new record, each class deleted, each kept in use.
func (pp providerPlan) inventoryChange() string {
	var parts []string
	for _, rc := range slices.Sorted(maps.Keys(pp.inv.invs)) {
		rec := pp.inv.invs[rc]
		if old, had := pp.have.invs[rc]; had && old.Equal(rec) {
			continue
		}
		part := rc + " " + describeInventory(rec)
		if reason := pp.p.Inventories[rc].Unavailable; reason != "" {
			part += " (held back: " + reason + ")"
		}
		parts = append(parts, part)
	}
	for _, rc := range slices.Sorted(maps.Keys(pp.have.invs)) {
		switch _, kept := pp.inv.invs[rc]; {
		case kept && slices.Contains(pp.inv.keptInUse, rc):
			parts = append(parts, "keep "+rc+" (in use)")
		case kept:
		case slices.Contains(pp.inv.fallbackDeleted, rc):
			parts = append(parts, "delete "+rc+" (unavailable: "+pp.p.Inventories[rc].Unavailable+"; Placement is older than 1.26)")
		default:
			parts = append(parts, "delete "+rc)
		}
	}
	if pp.staleUsages {
		parts = append(parts, "(usages moved while read: re-read first)")
	}
	return strings.Join(parts, "; ")
}

// describeInventory is a record's total and reserved, and the fields that
// differ from Placement's defaults.
func describeInventory(inv placementclient.Inventory) string {
	s := "total=" + strconv.Itoa(inv.Total) + " reserved=" + strconv.Itoa(inv.Reserved)
	def := placementclient.Inventory{}.WithDefaults()
	if inv.MinUnit != def.MinUnit {
		s += " min_unit=" + strconv.Itoa(inv.MinUnit)
	}
	if inv.MaxUnit != def.MaxUnit {
		s += " max_unit=" + strconv.Itoa(inv.MaxUnit)
	}
	if inv.StepSize != def.StepSize {
		s += " step_size=" + strconv.Itoa(inv.StepSize)
	}
	if inv.AllocationRatio != def.AllocationRatio {
		s += " allocation_ratio=" + strconv.FormatFloat(inv.AllocationRatio, 'g', -1, 64)
	}
	return s
}
