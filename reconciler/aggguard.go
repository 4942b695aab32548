package reconciler

import (
	"errors"
	"fmt"

	"github.com/placement-syncd/placement-syncd/internal/removallimit"
	"github.com/placement-syncd/placement-syncd/novaclient"
)

// ErrRefused is returned for a mirroring run that would do harm and was
// therefore not applied: an empty Nova answer after a non-empty one, or
// more removals than the configured limit. Nothing is written; --force
// (RunFlags.Force) applies it anyway.
var ErrRefused = errors.New("refused")

// Refusal reasons, also the metric's reason label.
const (
	RefusedEmptyAnswer = "empty_answer"
	RefusedMaxRemovals = "max_removals"
)

// DefaultMaxRemovals returns the limit when none is configured: one run
// removes at most a tenth of the mirrored associations.
func DefaultMaxRemovals() removallimit.Limit { return removallimit.Limit{N: 10, Percent: true} }

// refusal checks a plan before anything is written; "" lets it through.
func refusal(nova novaclient.State, last NovaCounts, plan *AggregatePlan, observed map[string][]string, owned map[string]bool, limit removallimit.Limit) (reason, detail string) {
	switch {
	case len(nova.Nodes) == 0 && last.Hypervisors > 0:
		return RefusedEmptyAnswer, fmt.Sprintf("Nova listed no hypervisors, the last applied answer had %d", last.Hypervisors)
	case len(nova.Aggregates) == 0 && last.Aggregates > 0:
		return RefusedEmptyAnswer, fmt.Sprintf("Nova listed no aggregates, the last applied answer had %d", last.Aggregates)
	}
	total := 0
	for _, aggs := range observed {
		for _, a := range aggs {
			if owned[a] {
				total++
			}
		}
	}
	if n, allowed := plan.Removals(), limit.Allowed(total); n > allowed {
		return RefusedMaxRemovals, fmt.Sprintf("the plan removes %d of %d Nova aggregate associations, more than max_removals %s (%d)", n, total, limit, allowed)
	}
	return "", ""
}
