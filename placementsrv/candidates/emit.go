package candidates

import (
	"math/bits"
	"strconv"
)

// emit records the current complete assignment as a candidate. It
// returns true when generation must stop for this anchor.
func (e *engine) emit(r int32) bool {
	allocs := e.cur.Allocs[:0]
	for w, word := range e.inUse[:(len(e.slotInfo)+63)/64] {
		for ; word != 0; word &= word - 1 {
			slot := w*64 + bits.TrailingZeros64(word)
			si := e.slotInfo[slot]
			allocs = append(allocs, Alloc{si.prov, si.class, e.slots[slot].total})
		}
	}
	e.cur.Allocs = allocs
	nested := e.excludeNested && e.nestedInOne(allocs)
	if nested && !e.upstream {
		return false
	}
	// Only a candidate made entirely of sharing providers can come up
	// again under another anchor; Placement returns it once.
	if e.nonShared == 0 && e.seen(allocs) {
		return false
	}
	e.emitted++
	if nested {
		return e.ghost(r)
	}
	if e.sink != nil {
		return e.emitTo()
	}
	return e.record(r)
}

// nestedInOne reports whether two providers of one tree serve allocs (a
// candidate dropped before 1.29).
func (e *engine) nestedInOne(allocs []Alloc) bool {
	ps := e.s.Providers
	for i := range allocs {
		for j := range i {
			if allocs[i].Provider != allocs[j].Provider && ps[allocs[i].Provider].Root == ps[allocs[j].Provider].Root {
				return true
			}
		}
	}
	return false
}

// ghost counts a candidate Placement drops only after its cap counted it
// (a pre-1.29 answer's nested one). It returns true when generation must
// stop for this anchor.
func (e *engine) ghost(r int32) bool {
	if e.sink != nil {
		e.stopped = e.target > 0 && e.emitted >= e.target
		return e.stopped
	}
	stop := e.record(r)
	e.meta[len(e.meta)-1].drop = true
	return stop
}

// record keeps the candidate in e.cur.Allocs and the chosen options'
// mappings. It returns true when generation must stop for this anchor.
func (e *engine) record(r int32) bool {
	allocs := e.allocOut.take(len(e.cur.Allocs))
	copy(allocs, e.cur.Allocs)
	maps := e.mapsOut.take(len(e.groups))
	for d := range e.groups {
		o := &e.opts[d][e.chosen[d]]
		if o.frozen == nil {
			o.frozen = e.mapOut.take(int(o.p1 - o.p0))
			copy(o.frozen, e.provBuf[o.p0:o.p1])
		}
		maps[d] = o.frozen
	}
	e.cands = append(e.cands, Candidate{Allocs: allocs, Mappings: maps})
	if e.withMeta {
		e.meta = append(e.meta, candMeta{rank: e.curRank})
	}
	e.rootEmit++
	if e.target > 0 && len(e.cands) >= e.target {
		e.stopped = true
		return true
	}
	return e.perRoot > 0 && e.rootEmit >= e.perRoot
}

// emitTo hands the candidate in e.cur to the sink.
func (e *engine) emitTo() bool {
	for d := range e.groups {
		o := &e.opts[d][e.chosen[d]]
		e.cur.Mappings[d] = e.provBuf[o.p0:o.p1:o.p1]
	}
	marked := int32(-1)
	for w, word := range e.inUse[:(len(e.slotInfo)+63)/64] {
		for ; word != 0; word &= word - 1 {
			si := &e.slotInfo[w*64+bits.TrailingZeros64(word)]
			if si.root != marked {
				e.markRoot(si.root)
				marked = si.root
			}
			if e.usedBits != nil {
				setBit(e.usedBits, si.prov)
			}
		}
	}
	if !e.sink(&e.cur) || e.target > 0 && e.emitted >= e.target {
		e.stopped = true
		return true
	}
	return false
}

// seen reports whether an identical candidate (allocations and mappings)
// was already recorded, recording it otherwise.
func (e *engine) seen(allocs []Alloc) bool {
	k := appendAllocsKey(e.keyBuf[:0], allocs)
	for d := range e.groups {
		k = append(k, '|')
		o := &e.opts[d][e.chosen[d]]
		for _, p := range e.provBuf[o.p0:o.p1] {
			k = strconv.AppendInt(k, int64(p), 36)
			k = append(k, ',')
		}
	}
	e.keyBuf = k
	if e.dedup == nil {
		e.dedup = map[string]struct{}{}
	}
	if _, dup := e.dedup[string(k)]; dup {
		return true
	}
	e.dedup[string(k)] = struct{}{}
	return false
}

// appendAllocsKey appends to k a key that identifies allocs, in order.
func appendAllocsKey(k []byte, allocs []Alloc) []byte {
	for _, a := range allocs {
		k = strconv.AppendInt(k, int64(a.Provider), 36)
		k = append(k, ':')
		k = strconv.AppendInt(k, int64(a.Class), 36)
		k = append(k, ':')
		k = strconv.AppendInt(k, a.Amount, 36)
		k = append(k, ',')
	}
	return k
}

func bitSet(b []uint64, i int32) bool { return b[i/64]&(1<<(i%64)) != 0 }

func setBit(b []uint64, i int32) { b[i/64] |= 1 << (i % 64) }
