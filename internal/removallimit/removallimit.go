// Package removallimit bounds how much one run may remove, for the jobs
// that delete what a source no longer lists (the reconciler's aggregate
// mirroring, the agent's retirement of vanished nodes): a source that
// answers empty or half-empty must not empty Placement.
package removallimit

import (
	"fmt"
	"strconv"
	"strings"
)

// Limit is an absolute number of removals, or a percentage of what is
// held (rounded up, at least 1).
type Limit struct {
	N       int
	Percent bool
}

// Parse reads "25" or "10%".
func Parse(s string) (Limit, error) {
	v, pct := strings.CutSuffix(strings.TrimSpace(s), "%")
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || (pct && n > 100) {
		return Limit{}, fmt.Errorf("%q is neither a count nor a percentage (e.g. 50 or 10%%)", s)
	}
	return Limit{N: n, Percent: pct}, nil
}

func (l Limit) String() string {
	if l.Percent {
		return strconv.Itoa(l.N) + "%"
	}
	return strconv.Itoa(l.N)
}

// Allowed is the number of removals permitted out of total held.
func (l Limit) Allowed(total int) int {
	if !l.Percent {
		return l.N
	}
	return max(1, (l.N*total+99)/100)
}
