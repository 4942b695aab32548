package replica

import (
	"slices"
	"time"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// feedPos is which changes of the feed a replica's memory holds: every id
// up to frontier, and those up to top but the holes. A hole is an id below
// top that no change read so far holds: its writer has not committed, or
// rolled back, or the id was never used; it is asked for again on every
// read of the feed until a change or a tombstone fills it. Only the holder
// of the writer lock (State) changes it.
type feedPos struct {
	frontier, top int64
	// holes maps each hole to when it was first noticed.
	holes map[int64]time.Time
}

// posFrom is the position of a load.
func posFrom(p store.FeedPosition, now time.Time) *feedPos {
	pos := &feedPos{frontier: p.Settled, top: p.Settled, holes: map[int64]time.Time{}}
	for _, id := range p.Seen {
		pos.see(id, now)
	}
	return pos
}

// see records id as held, and the ids it skips above top as holes. It
// reports whether id was new to the position.
func (p *feedPos) see(id int64, now time.Time) bool {
	switch {
	case id > p.top:
		for h := p.top + 1; h < id; h++ {
			p.holes[h] = now
		}
		p.top = id
	case id <= p.frontier:
		return false
	default:
		if _, ok := p.holes[id]; !ok {
			return false
		}
		delete(p.holes, id)
	}
	p.advance()
	return true
}

// advance moves frontier up to the first hole.
func (p *feedPos) advance() {
	if len(p.holes) == 0 {
		p.frontier = p.top
		return
	}
	low := p.top
	for h := range p.holes {
		low = min(low, h)
	}
	p.frontier = low - 1
}

// missing lists the holes, ascending.
func (p *feedPos) missing() []int64 {
	out := make([]int64, 0, len(p.holes))
	for h := range p.holes {
		out = append(out, h)
	}
	slices.Sort(out)
	return out
}

// stale lists the holes noticed before t, ascending: those worth a
// tombstone.
func (p *feedPos) stale(t time.Time) []int64 {
	var out []int64
	for h, at := range p.holes {
		if at.Before(t) {
			out = append(out, h)
		}
	}
	slices.Sort(out)
	return out
}

// view is an immutable copy of a position for readers that do not hold
// the writer lock (Fresh).
type posView struct {
	frontier, top int64
	missing       []int64
}

func (p *feedPos) view() *posView {
	return &posView{frontier: p.frontier, top: p.top, missing: p.missing()}
}
