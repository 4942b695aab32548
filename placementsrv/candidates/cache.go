package candidates

import (
	"sync"
	"sync/atomic"

	"github.com/placement-syncd/placement-syncd/placementsrv/jsonenc"
	"github.com/placement-syncd/placement-syncd/placementsrv/readmodel"
)

// quotedNames holds a snapshot's provider uuids and class names already
// encoded as JSON strings, so that rendering large answers is mostly
// copying.
type quotedNames struct {
	snap      *readmodel.Snapshot
	providers [][]byte
	classes   [][]byte
	traits    [][]byte
	summaries *summaryCache
	kept      *anchorKeeper
}

// names returns the quoted names for snap, building them on first use.
func (rd *Renderer) names(snap *readmodel.Snapshot) *quotedNames {
	if q := rd.quoted.Load(); q != nil && q.snap == snap {
		return q
	}
	if q := rd.quoted.Load(); q != nil && sameNames(q.snap, snap) {
		// A patched snapshot shares its names with the one it came from:
		// quoting them again would cost a pass over the whole cloud per
		// write.
		nq := &quotedNames{snap: snap, providers: q.providers, classes: q.classes, traits: q.traits, summaries: q.summaries, kept: q.kept}
		rd.quoted.Store(nq)
		return nq
	}
	q := &quotedNames{snap: snap, providers: make([][]byte, len(snap.Providers)), classes: make([][]byte, len(snap.Classes)),
		summaries: &summaryCache{}, kept: &anchorKeeper{}}
	buf := make([]byte, 0, len(snap.Providers)*40)
	for i := range snap.Providers {
		start := len(buf)
		buf = jsonenc.AppendString(buf, snap.Providers[i].UUID)
		q.providers[i] = buf[start:len(buf):len(buf)]
	}
	for i, n := range snap.Classes {
		q.classes[i] = jsonenc.AppendString(nil, n)
	}
	q.traits = make([][]byte, len(snap.Traits))
	for i, n := range snap.Traits {
		q.traits[i] = jsonenc.AppendString(nil, n)
	}
	rd.quoted.Store(q)
	return q
}

// sameNames reports whether b has exactly a's providers, classes and
// traits, in the same order: it shares their tables (Snapshot.Patched).
func sameNames(a, b *readmodel.Snapshot) bool {
	return sameTable(a.Providers, b.Providers) && sameTable(a.Classes, b.Classes) && sameTable(a.Traits, b.Traits)
}

func sameTable[T any](a, b []T) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// summaryCache keeps each provider's rendered provider_summaries member.
// From 1.27 a summary lists every inventory, so it depends on the
// provider's state and the microversion's form only, not on the request:
// answers repeat the same fragments, and for answers with many providers
// they are most of the bytes (1,314 summaries are 0.9 of a 1.2 MB answer
// at 1,000 roots, and their rendering a quarter of the request's CPU).
//
// The cache is shared by the snapshots patched from one another (they
// share their provider table, see names), so a write costs what it
// touches: a patch gives the providers whose usage changed new
// inventories, and a fragment is current only while the inventories it
// was rendered from are the snapshot's. Allocating or clearing a table
// of every provider per write would cost in proportion to the cloud.
type summaryCache struct {
	forms [2]summaryForm // 1.27–1.28, then 1.29+ (with parent and root)
}

type summaryForm struct {
	once  sync.Once
	frags []atomic.Pointer[summaryFrag]
}

// summaryFrag is one provider's summary member and the inventories it was
// rendered from (their first element; nil for none).
type summaryFrag struct {
	from *readmodel.SnapInventory
	json []byte
}

// form returns the fragments of form i, sized for the provider table.
func (c *summaryCache) form(i, providers int) []atomic.Pointer[summaryFrag] {
	f := &c.forms[i]
	f.once.Do(func() { f.frags = make([]atomic.Pointer[summaryFrag], providers) })
	return f.frags
}

// firstInventory identifies a provider's inventories in a snapshot.
func firstInventory(invs []readmodel.SnapInventory) *readmodel.SnapInventory {
	if len(invs) == 0 {
		return nil
	}
	return &invs[0]
}
