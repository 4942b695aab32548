package candidates

import (
	"slices"
	"sync/atomic"

	"github.com/placement-syncd/placement-syncd/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/jsonenc"
	"github.com/placement-syncd/placement-syncd/placementsrv/readmodel"
)

// appendSummaries writes the provider_summaries members: 1.27+ every
// inventory (before, only requested classes), traits from 1.17, parent
// and root from 1.29.
func (cj *candidateJSON) appendSummaries(sums []int32) {
	q, mv := cj.q, cj.mv
	allClasses := mv.AtLeast(microversion.CandidatesAllClasses)
	tree := mv.AtLeast(microversion.CandidatesNested)
	var frags []atomic.Pointer[summaryFrag]
	if allClasses && len(sums) > 0 {
		form := 0
		if tree {
			form = 1
		}
		frags = q.summaries.form(form, len(q.snap.Providers))
	}
	var requested []int32
	if !allClasses {
		requested = requestedClasses(q.snap, cj.req.Groups)
	}
	b := cj.b
	for i, pi := range sums {
		if i > 0 {
			b = append(b, ',')
		}
		if cj.b = b; !cj.flush() {
			return
		}
		b = cj.b
		if frags == nil {
			b = appendSummary(b, q, pi, allClasses, requested, mv)
			continue
		}
		from := firstInventory(q.snap.Inventories(pi))
		if f := frags[pi].Load(); f != nil && f.from == from {
			b = append(b, f.json...)
			continue
		}
		start := len(b)
		b = appendSummary(b, q, pi, true, nil, mv)
		frags[pi].Store(&summaryFrag{from: from, json: slices.Clone(b[start:])})
	}
	cj.b = b
}

// requestedClasses lists the class ids a request names, for the
// summaries before 1.27.
func requestedClasses(s *readmodel.Snapshot, groups []Group) []int32 {
	var requested []int32
	for _, g := range groups {
		for _, r := range g.Resources {
			if c, ok := s.ClassByName[r.Class]; ok && !slices.Contains(requested, c) {
				requested = append(requested, c)
			}
		}
	}
	return requested
}

// appendSummary writes one provider's summary member: its quoted uuid,
// a colon and the object. With allClasses false only the requested
// classes are listed.
func appendSummary(b []byte, q *quotedNames, pi int32, allClasses bool, requested []int32, mv microversion.Version) []byte {
	p := &q.snap.Providers[pi]
	b = append(b, q.providers[pi]...)
	b = append(b, `:{"resources":{`...)
	first := true
	for _, inv := range q.snap.Inventories(pi) {
		if !allClasses && !slices.Contains(requested, inv.Class) {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, q.classes[inv.Class]...)
		b = append(b, `:{"capacity":`...)
		b = jsonenc.AppendInt(b, inv.Capacity)
		b = append(b, `,"used":`...)
		b = jsonenc.AppendInt(b, inv.Used)
		b = append(b, '}')
	}
	b = append(b, '}')
	if mv.AtLeast(microversion.CandidatesRequired) {
		// Trait ids are interned in database id order, which is the
		// order Placement lists them in.
		b = append(b, `,"traits":[`...)
		for k, t := range p.Traits {
			if k > 0 {
				b = append(b, ',')
			}
			b = append(b, q.traits[t]...)
		}
		b = append(b, ']')
	}
	if mv.AtLeast(microversion.CandidatesNested) {
		b = append(b, `,"parent_provider_uuid":`...)
		if p.Parent >= 0 {
			b = append(b, q.providers[p.Parent]...)
		} else {
			b = append(b, "null"...)
		}
		b = append(b, `,"root_provider_uuid":`...)
		b = append(b, q.providers[p.Root]...)
	}
	return append(b, '}')
}
