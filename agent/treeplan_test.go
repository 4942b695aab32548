package agent

import (
	"reflect"
	"slices"
	"testing"

	"github.com/placement-syncd/placement-syncd/drivers"
	"github.com/placement-syncd/placement-syncd/placementclient"
)

const (
	uRoot   = "00000000-0000-4000-8000-000000000001"
	uChild  = "00000000-0000-4000-8000-000000000002"
	uNode   = "00000000-0000-4000-8000-000000000003"
	uSteady = "00000000-0000-4000-8000-000000000004"
	uHost   = "00000000-0000-4000-8000-0000000000ff"
	aggA    = "aaaaaaaa-0000-4000-8000-000000000001"
	aggB    = "aaaaaaaa-0000-4000-8000-000000000002"
)

func inv(total, reserved int) placementclient.Inventory {
	return placementclient.Inventory{Total: total, Reserved: reserved}.WithDefaults()
}

// planFixture is a desired tree and what Placement holds for it: a new
// root with a new child, an existing node whose inventory changes, and a
// provider already in sync.
func planFixture() (*drivers.Tree, *treeState) {
	tree := &drivers.Tree{Providers: []drivers.Provider{
		{UUID: uRoot, Name: "root", Owner: drivers.OwnerNova, Traits: []string{"CUSTOM_RACK"},
			Inventories: map[string]drivers.Inventory{"VCPU": {Total: 8, AllocationRatio: 4}}, Aggregates: []string{aggB, aggA}},
		{UUID: uChild, Name: "child", Parent: drivers.Ref{UUID: uRoot}, Owner: drivers.OwnerCyborg,
			Inventories: map[string]drivers.Inventory{"FPGA": {Total: 1, Unavailable: drivers.ReasonProgramming}}},
		{UUID: uNode, Name: "node", Parent: drivers.Ref{Name: "host"}, Owner: drivers.OwnerNova,
			Inventories: map[string]drivers.Inventory{"CUSTOM_GOLD": {Total: 1, Unavailable: drivers.ReasonCleaning}}},
		{UUID: uSteady, Name: "steady", Inventories: map[string]drivers.Inventory{"DISK_GB": {Total: 100}}},
	}}
	st := &treeState{
		reservedOK: true,
		groups:     [][]drivers.Provider{tree.Providers[0:2], tree.Providers[2:3], tree.Providers[3:4]},
		parentOf:   map[string]string{uChild: uRoot, uNode: uHost},
		observed: map[string]observed{
			uNode: {exists: true, have: actual{gen: 7,
				invs:   map[string]placementclient.Inventory{"CUSTOM_GOLD": inv(1, 0), "CUSTOM_OLD": inv(2, 0), "CUSTOM_BUSY": inv(1, 0)},
				traits: []string{"CUSTOM_OPERATOR", "OWNER_NOVA", "CUSTOM_DROPPED"}},
				usages: &placementclient.Usages{Generation: 7, Usages: map[string]int{"CUSTOM_BUSY": 1}}},
			uSteady: {exists: true, have: actual{gen: 3, invs: map[string]placementclient.Inventory{"DISK_GB": inv(100, 0)}, traits: []string{}}},
		},
	}
	return tree, st
}

// TestPlanTree: the plan says, per provider, exactly which writes a pass
// makes, from the desired tree and what Placement holds; names already
// created and providers already in sync need none.
func TestPlanTree(t *testing.T) {
	tree, st := planFixture()
	mem := memory{
		owned:   map[string][]string{uNode: {"OWNER_NOVA", "CUSTOM_DROPPED"}},
		classes: map[string]bool{"CUSTOM_GOLD": true},
		traits:  map[string]bool{},
	}
	plan := planTree(tree, st, mem)

	if !slices.Equal(plan.classes, nil) || !slices.Equal(plan.traits, []string{"CUSTOM_RACK"}) {
		t.Fatalf("names to create: classes %v, traits %v", plan.classes, plan.traits)
	}
	if len(plan.groups) != 3 || len(plan.groups[0]) != 2 {
		t.Fatalf("groups %d (first %d), want 3 (first 2)", len(plan.groups), len(plan.groups[0]))
	}
	root, child, node, steady := plan.groups[0][0], plan.groups[0][1], plan.groups[1][0], plan.groups[2][0]
	if !root.create || root.parent != "" || !slices.Equal(root.traits, []string{"CUSTOM_RACK", "OWNER_NOVA"}) ||
		!slices.Equal(root.aggs, []string{aggA, aggB}) || !root.putInv || root.inv.invs["VCPU"].AllocationRatio != 4 {
		t.Fatalf("root plan %+v", root)
	}
	if !child.create || child.parent != uRoot || child.inv.invs["FPGA"].Reserved != 1 || child.aggs != nil {
		t.Fatalf("child plan %+v", child)
	}
	// The node keeps the operator's trait, drops the one the agent no
	// longer wants, holds its gold inventory back, deletes the old class
	// and keeps the one in use.
	if node.create || node.parent != uHost || !slices.Equal(node.traits, []string{"CUSTOM_OPERATOR", "OWNER_NOVA"}) {
		t.Fatalf("node plan %+v", node)
	}
	wantInv := map[string]placementclient.Inventory{"CUSTOM_GOLD": inv(1, 1), "CUSTOM_BUSY": inv(1, 0)}
	if !node.putInv || !reflect.DeepEqual(node.inv.invs, wantInv) || !slices.Equal(node.inv.keptInUse, []string{"CUSTOM_BUSY"}) || node.staleUsages {
		t.Fatalf("node inventory plan %+v", node.inv)
	}
	if steady.create || steady.traits != nil || steady.putInv || steady.aggs != nil {
		t.Fatalf("steady provider plans writes: %+v", steady)
	}

	want := []string{
		`ensure trait CUSTOM_RACK`,
		`create provider "root" (` + uRoot + `)`,
		`set traits of "root" (` + uRoot + `): +CUSTOM_RACK +OWNER_NOVA`,
		`set inventories of "root" (` + uRoot + `): VCPU total=8 reserved=0 allocation_ratio=4`,
		`set aggregates of "root" (` + uRoot + `): +` + aggA + ` +` + aggB,
		`create provider "child" (` + uChild + `) under ` + uRoot,
		`set traits of "child" (` + uChild + `): +OWNER_CYBORG`,
		`set inventories of "child" (` + uChild + `): FPGA total=1 reserved=1 (held back: programming)`,
		`set traits of "node" (` + uNode + `): -CUSTOM_DROPPED`,
		`set inventories of "node" (` + uNode + `): CUSTOM_GOLD total=1 reserved=1 (held back: cleaning); keep CUSTOM_BUSY (in use); delete CUSTOM_OLD`,
	}
	if got := plan.lines(); !slices.Equal(got, want) {
		t.Fatalf("plan lines:\n%s\nwant:\n%s", join(got), join(want))
	}

	// Pure: the same input gives the same plan, and the input is left as
	// it was.
	tree2, st2 := planFixture()
	if !reflect.DeepEqual(tree, tree2) || !reflect.DeepEqual(st, st2) {
		t.Fatal("planTree changed its input")
	}
	if again := planTree(tree2, st2, mem); !slices.Equal(again.lines(), want) {
		t.Fatalf("a second plan differs:\n%s", join(again.lines()))
	}
}

// TestPlanProvider_OldServerAndStaleUsages: below 1.26 an unavailable
// class is deleted (and counted) unless in use; usages read at another
// generation make the inventory write wait for a re-read.
func TestPlanProvider_OldServerAndStaleUsages(t *testing.T) {
	p := drivers.Provider{UUID: uNode, Name: "node", Inventories: map[string]drivers.Inventory{
		"CUSTOM_GOLD": {Total: 1, Unavailable: drivers.ReasonCleaning}, "CUSTOM_BUSY": {Total: 1, Unavailable: drivers.ReasonInUse}}}
	obs := observed{exists: true, have: actual{gen: 4, traits: []string{},
		invs: map[string]placementclient.Inventory{"CUSTOM_GOLD": inv(1, 0), "CUSTOM_BUSY": inv(1, 0)}},
		usages: &placementclient.Usages{Generation: 4, Usages: map[string]int{"CUSTOM_BUSY": 1}}}
	pp := planProvider(p, "", obs, nil, false)
	if !pp.putInv || pp.fallbackDeletes != 1 || !slices.Equal(pp.inv.fallbackDeleted, []string{"CUSTOM_BUSY", "CUSTOM_GOLD"}) ||
		!slices.Equal(pp.inv.keptInUse, []string{"CUSTOM_BUSY"}) || pp.staleUsages {
		t.Fatalf("old server plan %+v", pp)
	}
	want := `set inventories of "node" (` + uNode + `): keep CUSTOM_BUSY (in use); delete CUSTOM_GOLD (unavailable: cleaning; Placement is older than 1.26)`
	if got := pp.lines(); !slices.Equal(got, []string{want}) {
		t.Fatalf("lines %q, want %q", got, want)
	}
	obs.usages.Generation = 5
	if pp := planProvider(p, "", obs, nil, false); !pp.staleUsages {
		t.Fatal("usages read at another generation were trusted")
	}
}

func join(lines []string) string {
	out := ""
	for _, l := range lines {
		out += "  " + l + "\n"
	}
	return out
}

// TestHeldBack: a pass names each provider it holds back with its
// reason, the first class's by name when a provider has several.
func TestHeldBack(t *testing.T) {
	tree, _ := planFixture()
	tree.Providers = append(tree.Providers, drivers.Provider{UUID: uHost, Name: "two", Inventories: map[string]drivers.Inventory{
		"CUSTOM_Z": {Total: 1, Unavailable: drivers.ReasonCleaning}, "CUSTOM_A": {Total: 1, Unavailable: drivers.ReasonInUse}, "VCPU": {Total: 4}}})
	want := map[string]string{uChild: drivers.ReasonProgramming, uNode: drivers.ReasonCleaning, uHost: drivers.ReasonInUse}
	if got := heldBack(tree); !reflect.DeepEqual(got, want) {
		t.Errorf("held back %v, want %v", got, want)
	}
}
