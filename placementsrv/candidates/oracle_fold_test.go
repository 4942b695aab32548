package candidates

import "slices"

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
// which products passed depends on the order of the group requests, which
// upstream takes from Python sets and the oracle from Go maps.
func (f *oFold) orderDependent(o *oracle) bool {
	for k, amt := range f.objs {
		if o.exceeds([]oArr{{k.prov, k.class, *amt}}) {
			return true
		}
	}
	return false
}
