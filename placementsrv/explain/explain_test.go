package explain

import (
	"slices"
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/candidates"
	"github.com/placement-syncd/placement-syncd/placementsrv/candidates/randworld"
	"github.com/placement-syncd/placement-syncd/placementsrv/readmodel"
)

// vcpu is an inventory of class 0 (VCPU in randworld.Classes).
func vcpu(total, reserved, used int64) readmodel.SnapInventory {
	return readmodel.SnapInventory{Class: 0, Total: total, Reserved: reserved, Used: used, MinUnit: 1, MaxUnit: total,
		StepSize: 1, AllocationRatio: 1, Capacity: total - reserved}
}

// TestExplainStages checks the stage that empties the answer, the
// blocker and the nearest miss's reason for one failing constraint of
// each kind, on a host with two NUMA children (only the first has VCPU,
// only the second T3) and a second host held back.
func TestExplainStages(t *testing.T) {
	ws := []randworld.Prov{
		{UUID: "host", Traits: []string{"T0"}},
		{UUID: "numa0", Parent: "host", Invs: []readmodel.SnapInventory{vcpu(4, 0, 2)}, Traits: []string{"T1"}},
		{UUID: "numa1", Parent: "host", Traits: []string{"T3"}},
		{UUID: "held", Invs: []readmodel.SnapInventory{vcpu(4, 4, 0)}},
	}
	snap := randworld.Build(ws)
	tests := []struct {
		name         string
		req          candidates.Request
		emptied      string
		blocker      string
		missContains string
	}{
		{"capacity", candidates.Request{Groups: []candidates.Group{{Resources: []candidates.Resource{{Class: "VCPU", Amount: 3}}}}},
			"group (unsuffixed)", "", "numa0: VCPU: needs 3, free 2 (total 4 × 1.0 − reserved 0 − used 2)"},
		{"required trait", candidates.Request{Groups: []candidates.Group{{Resources: []candidates.Resource{{Class: "VCPU", Amount: 1}}, Required: [][]string{{"T2"}}}}},
			"group (unsuffixed)", "required=T2", "missing trait T2"},
		{"any-of trait", candidates.Request{Groups: []candidates.Group{{Suffix: "1", Resources: []candidates.Resource{{Class: "VCPU", Amount: 1}}, Required: [][]string{{"T2", "T3"}}}}},
			"group 1", "required1=in:T2,T3", "numa0: missing trait in:T2,T3"},
		{"forbidden trait", candidates.Request{Groups: []candidates.Group{{Suffix: "1", Resources: []candidates.Resource{{Class: "VCPU", Amount: 1}}, Forbidden: []string{"T1"}}}},
			"group 1", "required1=!T1", "numa0: has forbidden trait T1"},
		{"root_required", candidates.Request{Groups: []candidates.Group{{Resources: []candidates.Resource{{Class: "VCPU", Amount: 1}}}}, RootRequired: []string{"T3"}},
			"root_required=T3", "root_required=T3", "root lacks trait T3"},
		{"isolate", candidates.Request{Groups: []candidates.Group{{Suffix: "1", Resources: []candidates.Resource{{Class: "VCPU", Amount: 1}}}, {Suffix: "2", Resources: []candidates.Resource{{Class: "VCPU", Amount: 1}}}},
			GroupPolicy: candidates.PolicyIsolate}, "group_policy=isolate", "group_policy=isolate", "group_policy=isolate"},
		{"same_subtree", candidates.Request{Groups: []candidates.Group{{Suffix: "1", Resources: []candidates.Resource{{Class: "VCPU", Amount: 1}}}, {Suffix: "2", Required: [][]string{{"T3"}}}},
			GroupPolicy: candidates.PolicyNone, SameSubtree: [][]string{{"1", "2"}}}, "same_subtree", "same_subtree=1,2", "same_subtree"},
		{"in_tree", candidates.Request{Groups: []candidates.Group{{Resources: []candidates.Resource{{Class: "VCPU", Amount: 1}}, InTree: "held"}}},
			"group (unsuffixed)", "in_tree=held", "not in tree held"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ex, err := Explain(snap, tt.req, candidates.Options{NestedAware: true}, Options{Misses: 2})
			if err != nil {
				t.Fatal(err)
			}
			if ex.Returned != 0 || ex.Emptied != tt.emptied {
				t.Fatalf("returned %d, emptied at %q; want 0 at %q\n%+v", ex.Returned, ex.Emptied, tt.emptied, ex.Stages)
			}
			var blockers []string
			for _, b := range ex.Blockers {
				for _, c := range b.Constraints {
					blockers = append(blockers, c.Text)
				}
			}
			if tt.blocker != "" && !slices.Contains(blockers, tt.blocker) {
				t.Errorf("blockers %v lack %q", blockers, tt.blocker)
			}
			if len(ex.Misses) == 0 || ex.Misses[0].UUID != "host" || !strings.Contains(strings.Join(ex.Misses[0].Reasons, "\n"), tt.missContains) {
				t.Errorf("nearest miss %+v, want host with %q", ex.Misses, tt.missContains)
			}
		})
	}
}

// TestExplainHeldBack: a class whose every provider is reserved in full
// is said to be held back, apart from providers without room.
func TestExplainHeldBack(t *testing.T) {
	snap := randworld.Build([]randworld.Prov{{UUID: "a", Invs: []readmodel.SnapInventory{vcpu(1, 1, 0)}}, {UUID: "b", Invs: []readmodel.SnapInventory{vcpu(1, 1, 0)}}})
	ex, err := Explain(snap, candidates.Request{Groups: []candidates.Group{{Resources: []candidates.Resource{{Class: "VCPU", Amount: 1}}}}}, candidates.Options{}, Options{Misses: 5})
	if err != nil {
		t.Fatal(err)
	}
	if c := ex.Groups[0].Classes[0]; c.With != 2 || c.HeldBack != 2 || c.NoFit != 0 || c.Fit != 0 {
		t.Errorf("class count %+v", c)
	}
	if !slices.Contains(ex.Why, "group (unsuffixed): every provider of VCPU is held back (reserved == total): 2") {
		t.Errorf("why %q", ex.Why)
	}
	if len(ex.Misses) != 2 || ex.Misses[1].Reasons[0] != "b: VCPU: held back: reserved == total (1)" {
		t.Errorf("misses %+v", ex.Misses)
	}
}
