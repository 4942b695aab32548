package reconciler

import (
	"context"
	"fmt"
)

// JobAggregates mirrors Nova host aggregates into Placement.
const JobAggregates = "aggregates"

// aggregatesJob mirrors Nova host aggregates into Placement
// (AggregateSync); without a Nova source it is left out.
func aggregatesJob() jobKind {
	return jobKind{
		name:      JobAggregates,
		needsNova: true,
		work: func(r *Reconciler) jobFunc {
			return func(ctx context.Context) (outcome, error) {
				res, err := r.aggs.Run(ctx, false)
				return aggregateOutcome(res), err
			}
		},
		reportsUnmapped: true,
	}
}

func aggregateOutcome(res *AggregateResult) outcome {
	if res == nil {
		return outcome{}
	}
	o := outcome{changes: res.Changes(), drift: res.Plan.Drift(), conflicts: res.Conflicts, giveUps: res.GiveUps}
	for _, u := range res.Plan.Unmapped {
		o.unmapped = append(o.unmapped, u.Host)
	}
	o.detail = fmt.Sprintf("%d providers in sync, %d written, %d failed (read %s)", res.Plan.InSync, res.Writes(), len(res.Failed()), res.Strategy)
	if len(res.Plan.Held) > 0 {
		o.detail += fmt.Sprintf(", %d held (host listed without hypervisors)", len(res.Plan.Held))
	}
	if res.Refused != "" {
		o.detail = "refused, nothing written: " + res.Refused
	}
	return o
}
