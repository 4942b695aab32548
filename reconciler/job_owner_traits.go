package reconciler

import (
	"context"
	"fmt"
)

// JobOwnerTraits stamps OWNER_NOVA on Nova-owned providers.
const JobOwnerTraits = "owner_traits"

// ownerTraitsJob reads Nova's compute list, re-evaluates the gate and
// stamps OWNER_NOVA while it is open (OwnerStamp); a run that leaves
// nothing unstamped turns the pre-filter on.
func ownerTraitsJob() jobKind {
	return jobKind{
		name: JobOwnerTraits,
		work: func(r *Reconciler) jobFunc {
			return func(ctx context.Context) (outcome, error) {
				listErr := r.RefreshComputes(ctx)
				res, err := r.stamp.Run(ctx, false)
				if err == nil {
					r.stamped(res)
				}
				o := stampOutcome(res)
				if listErr != nil && err == nil {
					// The gate closed on it: the run failed at its first step.
					err = fmt.Errorf("Nova's compute list not read: %w", listErr)
				}
				return o, err
			}
		},
	}
}

func stampOutcome(res *StampResult) outcome {
	if res == nil {
		return outcome{}
	}
	o := outcome{changes: len(res.Stamped), drift: len(res.Candidates), conflicts: res.Conflicts, giveUps: res.GiveUps}
	if !res.Gate.Open {
		o.detail = "gate closed: " + res.Gate.Reason
	} else {
		o.detail = fmt.Sprintf("%d providers lacked %s, %d stamped", len(res.Candidates), TraitOwnerNova, len(res.Stamped))
	}
	return o
}
