package reconciler

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
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

// RemovalLimit bounds the associations one mirroring run may remove:
// an absolute number, or a percentage of the Nova associations
// Placement holds (rounded up, at least 1).
type RemovalLimit struct {
	N       int
	Percent bool
}

// DefaultMaxRemovals returns the limit when none is configured: one run
// removes at most a tenth of the mirrored associations.
func DefaultMaxRemovals() RemovalLimit { return RemovalLimit{N: 10, Percent: true} }

// ParseRemovalLimit reads "25" (associations) or "10%".
func ParseRemovalLimit(s string) (RemovalLimit, error) {
	v, pct := strings.CutSuffix(strings.TrimSpace(s), "%")
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || (pct && n > 100) {
		return RemovalLimit{}, fmt.Errorf("%q is neither a count nor a percentage (e.g. 50 or 10%%)", s)
	}
	return RemovalLimit{N: n, Percent: pct}, nil
}

func (l RemovalLimit) String() string {
	if l.Percent {
		return strconv.Itoa(l.N) + "%"
	}
	return strconv.Itoa(l.N)
}

// allowed is the number of removals permitted out of total associations.
func (l RemovalLimit) allowed(total int) int {
	if !l.Percent {
		return l.N
	}
	return max(1, (l.N*total+99)/100)
}

// refusal checks a plan before anything is written; "" lets it through.
func refusal(nova NovaState, last NovaCounts, plan *AggregatePlan, observed map[string][]string, owned map[string]bool, limit RemovalLimit) (reason, detail string) {
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
	if n, allowed := plan.Removals(), limit.allowed(total); n > allowed {
		return RefusedMaxRemovals, fmt.Sprintf("the plan removes %d of %d Nova aggregate associations, more than max_removals %s (%d)", n, total, limit, allowed)
	}
	return "", ""
}
