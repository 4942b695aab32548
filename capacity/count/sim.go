package count

import "github.com/placement-syncd/placement-syncd/placementsrv/readmodel"

// sim counts a tree none of whose requested classes a sharing provider
// offers, without the engine: it finds the engine's first candidate at
// the root the way the engine's search does (groups in request order; a
// granular group's options are single providers in tree order whose
// traits match and that fit each amount; the unsuffixed group's are
// tuples of a provider per class, each fitting its amount and bearing no
// forbidden trait, the last class varying fastest, their traits together
// holding the required ones; group_policy=isolate keeps granular groups
// on distinct providers; amounts taken together from one inventory must
// fit its capacity and max_unit), claims it as many times as it fits
// (claims only make fewer candidates fit, so the first stays first while
// it fits), and starts again. Nothing outside the tree changes, so the
// count is the tree's own.
type sim struct {
	w     *world
	n     int      // providers of the tree, in preorder
	cells []cell   // by provider and column
	masks []uint64 // trait bits by provider
	provs []int32  // the providers, by local number
	share []bool   // by provider: a sharing provider
	free  []int64  // what is free, as claims go
	tot   []int64  // the amounts taken by the branch searched
	leaf  []int64  // the amounts of the candidate found
	gran  []bool   // by provider: a granular group is on it
	lists [][]int32
	idx   [][]int // odometers, by depth
}

func newSim(w *world) *sim { return &sim{w: w} }

// load reads root r's tree from snap, and the sharing providers r draws
// from when shared is set.
func (s *sim) load(snap *readmodel.Snapshot, r int32, shared bool) {
	w := s.w
	s.provs = append(s.provs[:0], snap.Providers[r].Tree...)
	if shared {
		s.provs = append(s.provs, snap.Providers[r].SharedTo...)
	}
	s.n = len(s.provs)
	nc := s.n * w.ncol
	s.cells = grow(s.cells, nc)
	s.masks = grow(s.masks, s.n)
	s.share = grow(s.share, s.n)
	tree := len(snap.Providers[r].Tree)
	for lp, q := range s.provs {
		cells := s.cells[lp*w.ncol : (lp+1)*w.ncol]
		w.rowIn(snap, q, cells)
		if lp >= tree {
			for k := range cells {
				cells[k].freeReleased = cells[k].free // only the root's tree is released
			}
		}
		s.masks[lp] = w.traitMask(&snap.Providers[q])
		s.share[lp] = snap.Providers[q].Sharing
	}
	s.free, s.tot, s.leaf = grow(s.free, nc), grow(s.tot, nc), grow(s.leaf, nc)
	s.gran = grow(s.gran, s.n)
}

func grow[T any](xs []T, n int) []T {
	if cap(xs) < n {
		return make([]T, n)
	}
	return xs[:n]
}

// count is how many times p's first candidate can be claimed one after
// another, with held-back inventories released when release is set;
// claim, when set, is told each batch: k times the amounts of the leaf.
func (s *sim) count(p *plan, release bool) int64 { return s.countClaiming(p, release, nil) }

func (s *sim) countClaiming(p *plan, release bool, claim func(k int64)) int64 {
	for k := range s.free {
		s.free[k] = s.cells[k].free
		if release {
			s.free[k] = s.cells[k].freeReleased
		}
	}
	var n int64
	for {
		clear(s.tot)
		clear(s.gran)
		if !s.search(p, 0) {
			return n
		}
		k := int64(-1)
		for j, a := range s.leaf {
			if a > 0 {
				if m := s.free[j] / a; k < 0 || m < k {
					k = m
				}
			}
		}
		for j, a := range s.leaf {
			s.free[j] -= k * a
		}
		if claim != nil {
			claim(k)
		}
		n += k
	}
}

// search places groups d onwards; true when a candidate was found (in
// s.leaf).
func (s *sim) search(p *plan, d int) bool {
	if d == len(p.groups) {
		if s.sharingOnly() {
			return false
		}
		copy(s.leaf, s.tot)
		return true
	}
	g := &p.groups[d]
	if g.granular {
		return s.granular(p, d, g)
	}
	return s.unsuffixed(p, d, g)
}

// fits reports whether provider lp's column holds amount by itself.
func (s *sim) fits(lp int, a colAmount) bool {
	k := lp*s.w.ncol + int(a.col)
	x := &s.cells[k]
	return x.step > 0 && a.n >= x.minUnit && a.n <= x.maxUnit && a.n%x.step == 0 && a.n <= s.free[k]
}

// take adds the amounts of res on providers at to the branch, checking
// their totals; on failure nothing is taken.
func (s *sim) take(res []colAmount, at func(int) int) bool {
	for j, a := range res {
		k := at(j)*s.w.ncol + int(a.col)
		s.tot[k] += a.n
		if s.tot[k] > s.free[k] || s.tot[k] > s.cells[k].maxUnit {
			s.put(res[:j+1], at)
			return false
		}
	}
	return true
}

// put gives back what take took.
func (s *sim) put(res []colAmount, at func(int) int) {
	for j, a := range res {
		s.tot[at(j)*s.w.ncol+int(a.col)] -= a.n
	}
}

func (s *sim) granular(p *plan, d int, g *cgroup) bool {
	for lp := 0; lp < s.n; lp++ {
		m := s.masks[lp]
		if m&g.forbM != 0 || !holdsAll(m, g.clauses) || p.policyIsolate && s.gran[lp] {
			continue
		}
		ok := true
		for _, a := range g.colRes {
			ok = ok && s.fits(lp, a)
		}
		at := func(int) int { return lp }
		if !ok || !s.take(g.colRes, at) {
			continue
		}
		s.gran[lp] = true
		found := s.search(p, d+1)
		s.gran[lp] = false
		s.put(g.colRes, at)
		if found {
			return true
		}
	}
	return false
}

func (s *sim) unsuffixed(p *plan, d int, g *cgroup) bool {
	// Lists per class, kept per depth: deeper groups list their own.
	for len(s.lists) < (d+1)*len(g.colRes) {
		s.lists = append(s.lists, nil)
	}
	lists := s.lists[d*len(g.colRes) : (d+1)*len(g.colRes)]
	for k, a := range g.colRes {
		l := lists[k][:0]
		for lp := 0; lp < s.n; lp++ {
			if s.masks[lp]&g.forbM == 0 && s.fits(lp, a) {
				l = append(l, int32(lp))
			}
		}
		if len(l) == 0 {
			return false
		}
		lists[k] = l
	}
	for len(s.idx) <= d {
		s.idx = append(s.idx, nil)
	}
	idx := grow(s.idx[d], len(lists))
	clear(idx)
	s.idx[d] = idx
	at := func(j int) int { return int(lists[j][idx[j]]) }
	for {
		if s.together(g, lists, idx) && s.take(g.colRes, at) {
			found := s.search(p, d+1)
			s.put(g.colRes, at)
			if found {
				return true
			}
		}
		k := len(idx) - 1
		for ; k >= 0; k-- {
			if idx[k]++; idx[k] < len(lists[k]) {
				break
			}
			idx[k] = 0
		}
		if k < 0 {
			return false
		}
	}
}

// together checks the group's required traits against the chosen
// providers' traits together.
func (s *sim) together(g *cgroup, lists [][]int32, idx []int) bool {
	for _, cl := range g.clauses {
		held := false
		for k := range lists {
			held = held || s.masks[lists[k][idx[k]]]&cl != 0
		}
		if !held {
			return false
		}
	}
	return true
}

func holdsAll(m uint64, clauses []uint64) bool {
	for _, cl := range clauses {
		if m&cl == 0 {
			return false
		}
	}
	return true
}

// sharingOnly reports whether the branch takes from sharing providers
// only.
func (s *sim) sharingOnly() bool {
	for j, a := range s.tot {
		if a > 0 && !s.share[j/s.w.ncol] {
			return false
		}
	}
	return true
}
