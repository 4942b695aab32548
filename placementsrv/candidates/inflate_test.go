package candidates

import (
	"fmt"
	"slices"
	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/readmodel"
)

// foldWorld is one root (store id 1) with children P (id 2) and Q (id 3)
// holding pTotal and qTotal IPV4_ADDRESS.
func foldWorld(pTotal, qTotal int64) *readmodel.Snapshot {
	b := readmodel.NewSnapshotBuilder(1, 3)
	ip := b.ClassWithID("IPV4_ADDRESS", 3)
	inv := func(total int64) []readmodel.SnapInventory {
		return []readmodel.SnapInventory{{Class: ip, Total: total, MinUnit: 1, MaxUnit: total, StepSize: 1, AllocationRatio: 1, Capacity: total}}
	}
	b.AddProvider(readmodel.SnapProvider{ID: 1, UUID: "r"}, readmodel.ProviderState{})
	b.AddProvider(readmodel.SnapProvider{ID: 2, UUID: "p"}, readmodel.ProviderState{Inventories: inv(pTotal)})
	b.AddProvider(readmodel.SnapProvider{ID: 3, UUID: "q"}, readmodel.ProviderState{Inventories: inv(qTotal)})
	return b.Finish(func(i int) int32 { return map[bool]int32{true: -1, false: 0}[i == 0] })
}

// foldedAnswer renders candidates as "provider:amount,…|mappings" sorted.
func foldedAnswer(t *testing.T, s *readmodel.Snapshot, req Request) []string {
	t.Helper()
	res, err := Find(s, req, Options{NestedAware: true})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range res.Candidates {
		k := ""
		for _, a := range c.Allocs {
			k += fmt.Sprintf("%s:%d,", s.Providers[a.Provider].UUID, a.Amount)
		}
		for _, m := range c.Mappings {
			k += "|"
			for _, p := range m {
				k += s.Providers[p].UUID
			}
		}
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestFoldedInPlace pins Placement 8.0.0's answers (checked against the
// reference under several hash seeds) to
// resources=IPV4_ADDRESS:1&resources1=IPV4_ADDRESS:9 without group_policy.
func TestFoldedInPlace(t *testing.T) {
	ip := func(n int64) []Resource { return []Resource{{"IPV4_ADDRESS", n}} }
	req := Request{Groups: []Group{{Resources: ip(1)}, {Suffix: "1", Resources: ip(9)}}}
	for _, tc := range []struct {
		name   string
		q      int64
		policy string
		want   []string
	}{
		// Nothing outgrows an inventory: every product passes, and the
		// unsuffixed group's object shows 1+9 wherever it is used.
		{"roomy", 16, "", []string{"p:10,q:9,|p|q", "p:10,|p|p", "p:9,q:10,|q|p", "q:10,|q|q"}},
		// Q's object reaches 10 > 9 when group 1 takes Q too; group 1's
		// requests come Q first, so (Q, P) is checked after that and fails.
		{"tight", 9, "", []string{"p:10,q:9,|p|q", "p:10,|p|p"}},
		// group_policy=none copies the object: the amounts requested.
		{"none", 9, PolicyNone, []string{"p:1,q:9,|p|q", "p:10,|p|p", "p:9,q:1,|q|p"}},
	} {
		r := req
		r.GroupPolicy = tc.policy
		if got := foldedAnswer(t, foldWorld(16, tc.q), r); !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
		// A limit takes candidates from that answer, amounts included.
		r.Limit = 1
		if got := foldedAnswer(t, foldWorld(16, tc.q), r); len(got) != 1 || !slices.Contains(tc.want, got[0]) {
			t.Errorf("%s limit 1: got %q, not one of %q", tc.name, got, tc.want)
		}
	}
}
