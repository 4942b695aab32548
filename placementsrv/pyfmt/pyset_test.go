package pyfmt

import (
	"fmt"
	"strings"
	"testing"
)

// TestPysetOrder checks the emulated iteration order against CPython
// 3.11's for a sequence of adds, a merge that resizes and a filter:
//
//	a = set(); [a.Add((i, i % 5, 2)) for i in range(40)]
//	b = set(((7 * i) % 97, 3) for i in range(60))
//	a |= set((x, y, 10001) for (x, y) in b)
//	d = set(t for t in a if t[1] % 2 == 0); print(d)
func TestPysetOrder(t *testing.T) {
	want := "{30,0,2},{2,2,2},{34,4,2},{12,2,2},{37,2,2},{9,4,2},{20,0,2},{24,4,2},{10,0,2},{14,4,2},{22,2,2},{32,2,2}," +
		"{35,0,2},{17,2,2},{29,4,2},{15,0,2},{19,4,2},{7,2,2},{4,4,2},{5,0,2},{27,2,2},{0,0,2},{39,4,2},{25,0,2}"
	pool := &SetPool{}
	a := pool.NewSet()
	for i := int64(0); i < 40; i++ {
		a.Add(Tuple{A: i, B: i % 5, C: 2, N: 3})
	}
	b := pool.NewSet()
	for i := int64(0); i < 60; i++ {
		b.Add(Tuple{A: (7 * i) % 97, B: 3, N: 2})
	}
	c := pool.NewSet()
	b.Each(func(k *Tuple) { c.Add(Tuple{A: k.A, B: k.B, C: 10001, N: 3}) })
	a.Merge(c)
	d := a.Filter(func(k *Tuple) bool { return k.B%2 == 0 })
	var got []string
	d.Each(func(k *Tuple) { got = append(got, fmt.Sprintf("{%d,%d,%d}", k.A, k.B, k.C)) })
	if g := strings.Join(got, ","); g != want {
		t.Fatalf("order\n got %s\nwant %s", g, want)
	}
	if h := (Tuple{A: 1, B: 2, C: 3, N: 3}).hash(); h != 529344067295497451 {
		t.Errorf("hash((1, 2, 3)) = %d, want 529344067295497451", h)
	}
}

// TestIntSetOrder checks IntSetOrder against CPython 3.11's
// list(set(l)) for each l below (collisions, perturbation, a resize).
func TestIntSetOrder(t *testing.T) {
	for _, tc := range []struct{ in, want []int64 }{
		{[]int64{2, 9}, []int64{9, 2}},
		{[]int64{9, 2, 9}, []int64{9, 2}},
		{[]int64{1, 9, 17}, []int64{1, 9, 17}},
		{[]int64{0, 1, 2, 9, 12, 18}, []int64{0, 1, 2, 9, 12, 18}},
		{[]int64{5, 13, 21, 29, 37, 45}, []int64{37, 5, 13, 45, 21, 29}},
		{[]int64{40, 37, 34, 31, 28, 25, 22, 19, 16, 13, 10, 7, 4, 1}, []int64{1, 34, 4, 37, 7, 40, 10, 13, 16, 19, 22, 25, 28, 31}},
	} {
		if got := IntSetOrder(tc.in); fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("IntSetOrder(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}
