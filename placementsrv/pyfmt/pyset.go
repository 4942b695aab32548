package pyfmt

import "math/bits"

// Set reproduces the slot layout, and so the iteration order, of a
// CPython 3.11 set of tuples of small non-negative integers. Placement
// 8.0.0 lets that order decide which anchor keeps an unsuffixed request
// served only by sharing providers (candidates' sharedOwners), so the
// same answer needs the same order. Keys are never removed, as upstream never
// removes from these sets (filters build new ones).
type Set struct {
	mask  uint64
	fill  int
	slots []pyslot
	pool  *SetPool
}

// pyslot is one table entry: the key's hash and its position in the
// pool plus one (0: empty).
type pyslot struct {
	hash uint64
	key  int32
}

// SetPool holds the keys of the sets built from it, so that sets copied
// into one another pass positions, not tuples.
type SetPool struct {
	keys []Tuple
}

// Tuple is a tuple of one to three ints (N is its length). PA and PB
// carry the caller's handles for A and B (candidates: the snapshot
// indexes of the providers A and B name); they must follow from A and B,
// so they take no part in hashing.
type Tuple struct {
	A, B, C int64
	N       int8
	PA, PB  int32
}

const (
	pyPrime1      = 11400714785074694791
	pyPrime2      = 14029467366897019727
	pyPrime5      = 2870177450012600261
	pyLinearProbe = 9
	pyPerturb     = 5
	pyMinSize     = 8
)

// hash is CPython's tuple hash (xxHash-based, 64-bit) of ints that hash
// to themselves.
func (t Tuple) hash() uint64 {
	acc := uint64(pyPrime5)
	lanes := [3]int64{t.A, t.B, t.C}
	for _, lane := range lanes[:t.N] {
		acc += uint64(lane) * pyPrime2
		acc = bits.RotateLeft64(acc, 31)
		acc *= pyPrime1
	}
	acc += uint64(t.N) ^ (pyPrime5 ^ 3527539)
	if acc == ^uint64(0) {
		return 1546275796
	}
	return acc
}

// NewSet returns an empty set whose keys live in pl.
func (pl *SetPool) NewSet() *Set {
	return &Set{mask: pyMinSize - 1, slots: make([]pyslot, pyMinSize), pool: pl}
}

// Len is len(s).
func (s *Set) Len() int { return s.fill }

// Pool is the pool s keeps its keys in, for sets built from s.
func (s *Set) Pool() *SetPool { return s.pool }

// Add adds a new tuple to s (and to the pool).
func (s *Set) Add(k Tuple) {
	s.pool.keys = append(s.pool.keys, k)
	s.addSlot(pyslot{k.hash(), int32(len(s.pool.keys))})
}

// addSlot is set_add_entry: probe for the key or a free slot, then
// resize at 3/5 fill.
func (s *Set) addSlot(e pyslot) {
	keys := s.pool.keys
	k := &keys[e.key-1]
	mask := s.mask
	i, perturb := e.hash&mask, e.hash
	for {
		probes := uint64(0)
		if i+pyLinearProbe <= mask {
			probes = pyLinearProbe
		}
		for j := uint64(0); j <= probes; j++ {
			t := &s.slots[i+j]
			if t.key == 0 {
				*t = e
				s.fill++
				if uint64(s.fill)*5 >= mask*3 {
					if s.fill > 50000 {
						s.resize(s.fill * 2)
					} else {
						s.resize(s.fill * 4)
					}
				}
				return
			}
			if t.hash == e.hash && (t.key == e.key || keys[t.key-1] == *k) {
				return
			}
		}
		perturb >>= pyPerturb
		i = (i*5 + 1 + perturb) & mask
	}
}

// Contains probes for k as Add would.
func (s *Set) Contains(k Tuple) bool {
	h := k.hash()
	mask := s.mask
	i, perturb := h&mask, h
	for {
		probes := uint64(0)
		if i+pyLinearProbe <= mask {
			probes = pyLinearProbe
		}
		for j := uint64(0); j <= probes; j++ {
			t := s.slots[i+j]
			if t.key == 0 {
				return false
			}
			if t.hash == h && s.pool.keys[t.key-1] == k {
				return true
			}
		}
		perturb >>= pyPerturb
		i = (i*5 + 1 + perturb) & mask
	}
}

// insertClean places a key known to be absent (set_insert_clean).
func insertClean(slots []pyslot, mask uint64, e pyslot) {
	i, perturb := e.hash&mask, e.hash
	for {
		probes := uint64(0)
		if i+pyLinearProbe <= mask {
			probes = pyLinearProbe
		}
		for j := uint64(0); j <= probes; j++ {
			if slots[i+j].key == 0 {
				slots[i+j] = e
				return
			}
		}
		perturb >>= pyPerturb
		i = (i*5 + 1 + perturb) & mask
	}
}

// resize is set_table_resize: the smallest power of two above minused,
// old entries reinserted in slot order.
func (s *Set) resize(minused int) {
	size := uint64(pyMinSize)
	for size <= uint64(minused) {
		size <<= 1
	}
	old := s.slots
	s.slots, s.mask = make([]pyslot, size), size-1
	for _, e := range old {
		if e.key != 0 {
			insertClean(s.slots, s.mask, e)
		}
	}
}

// Merge is set |= other (set_merge); both come from one pool.
func (s *Set) Merge(o *Set) {
	if o == s || o.fill == 0 {
		return
	}
	if uint64(s.fill+o.fill)*5 >= s.mask*3 {
		s.resize((s.fill + o.fill) * 2)
	}
	if s.fill == 0 {
		if s.mask == o.mask {
			copy(s.slots, o.slots)
		} else {
			for _, e := range o.slots {
				if e.key != 0 {
					insertClean(s.slots, s.mask, e)
				}
			}
		}
		s.fill = o.fill
		return
	}
	for _, e := range o.slots {
		if e.key != 0 {
			s.addSlot(e)
		}
	}
}

// Filter is a set comprehension over s keeping the keys keep accepts.
func (s *Set) Filter(keep func(*Tuple) bool) *Set {
	out := s.pool.NewSet()
	for _, e := range s.slots {
		if e.key != 0 && keep(&s.pool.keys[e.key-1]) {
			out.addSlot(e)
		}
	}
	return out
}

// Each calls f on the keys in iteration order.
func (s *Set) Each(f func(*Tuple)) {
	for _, e := range s.slots {
		if e.key != 0 {
			f(&s.pool.keys[e.key-1])
		}
	}
}

// IntSetOrder returns the distinct values of vs (non-negative) in the
// iteration order of a CPython 3.11 set they were added to in turn; such
// ints hash to themselves. Placement lists, for one, the resource classes
// of an allocation request in its messages in this order of their ids.
func IntSetOrder(vs []int64) []int64 {
	s := (&SetPool{}).NewSet()
	for _, v := range vs {
		s.pool.keys = append(s.pool.keys, Tuple{A: v, N: 1})
		s.addSlot(pyslot{uint64(v), int32(len(s.pool.keys))})
	}
	out := make([]int64, 0, s.fill)
	s.Each(func(k *Tuple) { out = append(out, k.A) })
	return out
}
