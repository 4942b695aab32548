package candidates

// arena hands out slices carved from chunks that are never reallocated,
// so results can keep pointing into them: many small candidates cost a
// few large allocations and no copying on growth.
type arena[T any] struct {
	cur  []T
	next int // size of the next chunk
}

// take returns a zeroed slice of n elements with capacity n.
func (a *arena[T]) take(n int) []T {
	if cap(a.cur)-len(a.cur) < n {
		if a.next < 256 {
			a.next = 256
		}
		a.cur = make([]T, 0, max(a.next, n))
		if a.next < 1<<16 {
			a.next *= 2
		}
	}
	l := len(a.cur)
	a.cur = a.cur[:l+n]
	return a.cur[l : l+n : l+n]
}
