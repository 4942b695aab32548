package reconciler

import (
	"context"
	"fmt"
)

// ownerTraitsJob stamps OWNER_NOVA while the version gate is open
// (OwnerStamp).
func ownerTraitsJob() jobKind {
	return jobKind{
		name: JobOwnerTraits,
		work: func(r *Reconciler) jobFunc {
			return func(ctx context.Context) (outcome, error) {
				res, err := r.stamp.Run(ctx, false)
				return stampOutcome(res), err
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
