package candidates

import (
	"slices"

	"github.com/placement-syncd/placement-syncd/placementsrv/pyfmt"
)

// oFold is the oracle's transcription of _consolidate_allocation_requests
// with copy_arr_if_needed: unless group_policy is none, the first group's
// AllocationRequestResource of each (provider, class) is kept and the
// later groups' amounts are added into it, and that object is the one the
// group request holds, shared by every product built from it: one per
// (anchor, provider, class) for the unsuffixed group (one tree walk per
// root), one per (provider, class) for a granular group (its requests at
// other anchors are shallow copies).
type oFold struct {
	inPlace bool
	objs    map[oObjKey]*int64
}

type oObjKey struct {
	group               int
	anchor, prov, class int32
}

// oRef is one allocation of a folded product and the object it shows.
type oRef struct {
	prov, class int32
	amt         *int64
}

func newOFold(policy string) *oFold {
	return &oFold{inPlace: policy != PolicyNone, objs: map[oObjKey]*int64{}}
}

// consolidate folds one product (groups in request order).
func (f *oFold) consolidate(combo []oAreq) ([]oRef, map[string][]int32) {
	var out []oRef
	maps := map[string][]int32{}
	for k, a := range combo {
		for _, rr := range a.rrs {
			i := slices.IndexFunc(out, func(r oRef) bool { return r.prov == rr.prov && r.class == rr.class })
			if i >= 0 {
				*out[i].amt += rr.amount
				continue
			}
			amt := new(int64)
			*amt = rr.amount
			if f.inPlace {
				key := oObjKey{k, a.anchor, rr.prov, rr.class}
				if a.sameProv {
					key.anchor = -1
				}
				if obj, ok := f.objs[key]; ok {
					amt = obj
				} else {
					f.objs[key] = amt
				}
			}
			out = append(out, oRef{rr.prov, rr.class, amt})
		}
		for suf, ps := range a.mappings {
			for _, p := range ps {
				if !slices.Contains(maps[suf], p) {
					maps[suf] = append(maps[suf], p)
				}
			}
		}
	}
	return out, maps
}

// arrs is the product as shown: its objects' current amounts.
func arrs(refs []oRef) []oArr {
	out := make([]oArr, len(refs))
	for i, r := range refs {
		out[i] = oArr{r.prov, r.class, *r.amt}
	}
	return out
}

// orderDependent reports whether some object outgrew its inventory: then
// which products passed depends on the order of the group requests.
func (f *oFold) orderDependent(o *oracle) bool {
	for k, amt := range f.objs {
		if o.exceeds([]oArr{{k.prov, k.class, *amt}}) {
			return true
		}
	}
	return false
}

// granularOrder sorts one anchor's requests of granular group g as
// Placement lists them: by their provider's place in the Python set of
// (provider id, root id) pairs the capacity query of g's last class
// returned.
func (o *oracle) granularOrder(g *Group, list []oAreq) {
	if len(g.Resources) == 0 {
		return
	}
	ps := o.s.Providers
	last := g.Resources[len(g.Resources)-1]
	c := o.s.ClassByName[last.Class]
	treeRoot := int32(-1)
	if p, ok := o.s.ByUUID[g.InTree]; ok {
		treeRoot = ps[p].Root
	}
	set := o.pool.NewSet()
	for i := range ps {
		if o.fitsAmt(int32(i), c, last.Amount) && (treeRoot < 0 || ps[i].Root == treeRoot) {
			set.Add(pyfmt.Tuple{A: ps[i].ID, B: ps[ps[i].Root].ID, N: 2})
		}
	}
	rank := map[int64]int{}
	set.Each(func(k *pyfmt.Tuple) { rank[k.A] = len(rank) })
	slices.SortStableFunc(list, func(a, b oAreq) int {
		return rank[ps[a.mappings[g.Suffix][0]].ID] - rank[ps[b.mappings[g.Suffix][0]].ID]
	})
}

// unsuffixedOrderMatters reports whether the order of the unsuffixed
// group's requests can change which products pass: unless that group
// comes first and asks for one class, several of its requests share an
// object, or its requests fold into a granular group's object.
func unsuffixedOrderMatters(req Request) bool {
	return req.Groups[0].Suffix != "" || len(req.Groups[0].Resources) != 1
}
