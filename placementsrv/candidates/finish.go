package candidates

import (
	"math/rand/v2"
	"slices"
)

// finish orders, limits and summarizes the generated candidates.
func (e *engine) finish() Result {
	if e.breadth {
		e.finishBreadth()
	}
	cands := e.cands
	if e.upstream && e.excludeNested {
		kept := make([]Candidate, 0, len(cands))
		for i, c := range cands {
			if !e.meta[i].drop {
				kept = append(kept, c)
			}
		}
		cands = kept
	}
	s := e.s
	var used []uint64 // providers taking part in any candidate (pre-1.29)
	if e.excludeNested {
		used = make([]uint64, (len(s.Providers)+63)/64)
		for _, c := range cands {
			for _, a := range c.Allocs {
				used[a.Provider/64] |= 1 << (a.Provider % 64)
			}
		}
	}
	if n := e.req.Limit; n > 0 && n < len(cands) {
		if e.opt.Randomize {
			for i := 0; i < n; i++ {
				j := i + e.intN(len(cands)-i)
				cands[i], cands[j] = cands[j], cands[i]
			}
		}
		cands = cands[:n]
	} else if e.opt.Randomize {
		for i := len(cands) - 1; i > 0; i-- {
			j := e.intN(i + 1)
			cands[i], cands[j] = cands[j], cands[i]
		}
	}
	var roots []int32
	for _, c := range cands {
		for _, a := range c.Allocs {
			roots = append(roots, s.Providers[a.Provider].Root)
		}
	}
	slices.Sort(roots)
	roots = slices.Compact(roots)
	var sums []int32
	for _, r := range roots {
		for _, p := range s.Providers[r].Tree {
			if used == nil || used[p/64]&(1<<(p%64)) != 0 {
				sums = append(sums, p)
			}
		}
	}
	return Result{Candidates: cands, Summaries: sums}
}

func (e *engine) intN(n int) int {
	if e.opt.Rand != nil {
		return e.opt.Rand.IntN(n)
	}
	return rand.IntN(n)
}
