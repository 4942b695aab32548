package candidates

import (
	"fmt"
	"strings"
	"testing"
)

// TestPysetOrder checks the emulated iteration order against CPython
// 3.11's for a sequence of adds, a merge that resizes and a filter:
//
//	a = set(); [a.add((i, i % 5, 2)) for i in range(40)]
//	b = set(((7 * i) % 97, 3) for i in range(60))
//	a |= set((x, y, 10001) for (x, y) in b)
//	d = set(t for t in a if t[1] % 2 == 0); print(d)
func TestPysetOrder(t *testing.T) {
	want := "{30,0,2},{2,2,2},{34,4,2},{12,2,2},{37,2,2},{9,4,2},{20,0,2},{24,4,2},{10,0,2},{14,4,2},{22,2,2},{32,2,2}," +
		"{35,0,2},{17,2,2},{29,4,2},{15,0,2},{19,4,2},{7,2,2},{4,4,2},{5,0,2},{27,2,2},{0,0,2},{39,4,2},{25,0,2}"
	pool := &pypool{}
	a := pool.newSet()
	for i := int64(0); i < 40; i++ {
		a.add(pytuple{a: i, b: i % 5, c: 2, n: 3})
	}
	b := pool.newSet()
	for i := int64(0); i < 60; i++ {
		b.add(pytuple{a: (7 * i) % 97, b: 3, n: 2})
	}
	c := pool.newSet()
	b.each(func(k *pytuple) { c.add(pytuple{a: k.a, b: k.b, c: 10001, n: 3}) })
	a.merge(c)
	d := a.filter(func(k *pytuple) bool { return k.b%2 == 0 })
	var got []string
	d.each(func(k *pytuple) { got = append(got, fmt.Sprintf("{%d,%d,%d}", k.a, k.b, k.c)) })
	if g := strings.Join(got, ","); g != want {
		t.Fatalf("order\n got %s\nwant %s", g, want)
	}
	if h := (pytuple{a: 1, b: 2, c: 3, n: 3}).hash(); h != 529344067295497451 {
		t.Errorf("hash((1, 2, 3)) = %d, want 529344067295497451", h)
	}
}

// TestPyIntSetOrder checks PyIntSetOrder against CPython 3.11's
// list(set(l)) for each l below (collisions, perturbation, a resize).
func TestPyIntSetOrder(t *testing.T) {
	for _, tc := range []struct{ in, want []int64 }{
		{[]int64{2, 9}, []int64{9, 2}},
		{[]int64{9, 2, 9}, []int64{9, 2}},
		{[]int64{1, 9, 17}, []int64{1, 9, 17}},
		{[]int64{0, 1, 2, 9, 12, 18}, []int64{0, 1, 2, 9, 12, 18}},
		{[]int64{5, 13, 21, 29, 37, 45}, []int64{37, 5, 13, 45, 21, 29}},
		{[]int64{40, 37, 34, 31, 28, 25, 22, 19, 16, 13, 10, 7, 4, 1}, []int64{1, 34, 4, 37, 7, 40, 10, 13, 16, 19, 22, 25, 28, 31}},
	} {
		if got := PyIntSetOrder(tc.in); fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("PyIntSetOrder(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}
