package ledger

import "sort"

// sortedByID returns conv of every member of set, in ascending id order:
// the order of Placement's indexes over the link tables.
func sortedByID[K comparable, V, R any](set map[K]V, id func(K) int64, conv func(K) R) []R {
	keys := make([]K, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return id(keys[i]) < id(keys[j]) })
	out := make([]R, len(keys))
	for i, k := range keys {
		out[i] = conv(k)
	}
	return out
}

// inEveryGroup reports whether have holds a member of every group (an
// any-of group of traits or aggregates).
func inEveryGroup[T comparable](have map[T]struct{}, groups [][]T) bool {
	for _, g := range groups {
		found := false
		for _, x := range g {
			if _, ok := have[x]; ok {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// someProviderInEvery reports whether some provider is linked to a member
// of every group of relation k; candidates are the providers of the first
// group's members.
func someProviderInEvery[T linked](groups [][]T, k linkKind[T]) bool {
	for _, x := range groups[0] {
		for p := range x.linkedProviders() {
			if inEveryGroup(k.links(p), groups) {
				return true
			}
		}
	}
	return false
}
