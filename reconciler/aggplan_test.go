package reconciler

import (
	"reflect"
	"testing"

	"github.com/placement-syncd/placement-syncd/novaclient"
)

func TestPlanAggregates(t *testing.T) {
	const (
		agA, agB, agOld, agOp = "aaaaaaaa-0000-0000-0000-000000000001", "aaaaaaaa-0000-0000-0000-000000000002", "aaaaaaaa-0000-0000-0000-000000000003", "0aaaaaaa-0000-0000-0000-0000000000ff"
		rp1, rp2, rp3, rp4    = "11111111-0000-0000-0000-000000000001", "11111111-0000-0000-0000-000000000002", "11111111-0000-0000-0000-000000000003", "11111111-0000-0000-0000-000000000004"
		shared                = "22222222-0000-0000-0000-000000000001"
	)
	nova := novaclient.State{
		Aggregates: []novaclient.Aggregate{
			{UUID: agA, Name: "a", Hosts: []string{"h1", "ironic"}},
			{UUID: agB, Name: "b", Hosts: []string{"h1"}},
		},
		Nodes: []novaclient.ComputeNode{
			{UUID: rp1, Host: "h1"},
			{UUID: rp2, Host: "ironic"}, {UUID: rp3, Host: "ironic"}, {UUID: rp4, Host: "ironic"},
		},
	}
	all := map[string]bool{rp1: true, rp2: true, rp3: true, rp4: true, shared: true}
	tests := []struct {
		name        string
		in          AggregateInput
		wantChanges []ProviderChange
		wantUnmap   []UnmappedHost
		wantInSync  int
		wantOwned   []string
		wantManaged []string
	}{
		{
			name: "empty placement: every node of every host gets its aggregates",
			in:   AggregateInput{Nova: nova, Existing: all},
			wantChanges: []ProviderChange{
				{Provider: rp1, Hosts: []string{"h1"}, Add: []string{agA, agB}, Desired: []string{agA, agB}},
				{Provider: rp2, Hosts: []string{"ironic"}, Add: []string{agA}, Desired: []string{agA}},
				{Provider: rp3, Hosts: []string{"ironic"}, Add: []string{agA}, Desired: []string{agA}},
				{Provider: rp4, Hosts: []string{"ironic"}, Add: []string{agA}, Desired: []string{agA}},
			},
			wantOwned:   []string{agA, agB},
			wantManaged: []string{rp1, rp2, rp3, rp4},
		},
		{
			name: "in sync, operator aggregate ignored",
			in: AggregateInput{Nova: nova, Existing: all, Observed: map[string][]string{
				rp1: {agA, agB, agOp}, rp2: {agA}, rp3: {agA}, rp4: {agA},
			}},
			wantInSync:  4,
			wantOwned:   []string{agA, agB},
			wantManaged: []string{rp1, rp2, rp3, rp4},
		},
		{
			name: "remembered aggregate Nova deleted is removed from managed providers only",
			in: AggregateInput{Nova: nova, Existing: all, Owned: []string{agOld}, Observed: map[string][]string{
				rp1: {agA, agB, agOld}, rp2: {agA}, rp3: {agA}, rp4: {agA}, shared: {agOld, agA},
			}},
			wantChanges: []ProviderChange{
				{Provider: rp1, Hosts: []string{"h1"}, Remove: []string{agOld}, Desired: []string{agA, agB}},
			},
			wantInSync:  3,
			wantOwned:   []string{agA, agB, agOld},
			wantManaged: []string{rp1, rp2, rp3, rp4},
		},
		{
			name: "host left an aggregate; remembered stray provider loses Nova aggregates",
			in: AggregateInput{
				Nova: novaclient.State{
					Aggregates: []novaclient.Aggregate{{UUID: agA, Hosts: []string{"h1"}}},
					Nodes:      nova.Nodes,
				},
				Existing: map[string]bool{rp1: true, rp2: true, rp3: true, rp4: true, "gone": true},
				Managed:  []string{"gone"},
				Owned:    []string{agB},
				Observed: map[string][]string{rp1: {agA, agB}, rp2: {agA}, "gone": {agA}},
			},
			wantChanges: []ProviderChange{
				{Provider: rp1, Hosts: []string{"h1"}, Remove: []string{agB}, Desired: []string{agA}},
				// It left its last aggregate: still shown with its host.
				{Provider: rp2, Hosts: []string{"ironic"}, Remove: []string{agA}},
				{Provider: "gone", Remove: []string{agA}},
			},
			wantOwned:   []string{agA, agB},
			wantManaged: []string{rp1, rp2, rp3, rp4, "gone"},
		},
		{
			name: "hosts without provider or compute node are reported, others planned",
			in: AggregateInput{
				Nova: novaclient.State{
					Aggregates: []novaclient.Aggregate{{UUID: agA, Hosts: []string{"h1", "nonode", "ironic"}}},
					Nodes:      nova.Nodes,
				},
				Existing: map[string]bool{rp1: true, rp3: true},
			},
			wantChanges: []ProviderChange{
				{Provider: rp1, Hosts: []string{"h1"}, Add: []string{agA}, Desired: []string{agA}},
				{Provider: rp3, Hosts: []string{"ironic"}, Add: []string{agA}, Desired: []string{agA}},
			},
			wantUnmap: []UnmappedHost{
				{Host: "ironic", Aggregates: []string{agA}, MissingProviders: []string{rp2, rp4}},
				{Host: "nonode", Aggregates: []string{agA}},
			},
			wantOwned:   []string{agA},
			wantManaged: []string{rp1, rp2, rp3, rp4},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := PlanAggregates(tt.in)
			if !reflect.DeepEqual(got.Changes, tt.wantChanges) {
				t.Errorf("changes:\n got %+v\nwant %+v", got.Changes, tt.wantChanges)
			}
			if !reflect.DeepEqual(got.Unmapped, tt.wantUnmap) {
				t.Errorf("unmapped:\n got %+v\nwant %+v", got.Unmapped, tt.wantUnmap)
			}
			if got.InSync != tt.wantInSync {
				t.Errorf("in sync = %d, want %d", got.InSync, tt.wantInSync)
			}
			if !reflect.DeepEqual(got.Owned, tt.wantOwned) {
				t.Errorf("owned = %v, want %v", got.Owned, tt.wantOwned)
			}
			if !reflect.DeepEqual(got.Managed, tt.wantManaged) {
				t.Errorf("managed = %v, want %v", got.Managed, tt.wantManaged)
			}
		})
	}
}

func TestChunks(t *testing.T) {
	ids := make([]string, 450)
	got := chunks(ids, 200)
	if len(got) != 3 || len(got[0]) != 200 || len(got[2]) != 50 {
		t.Fatalf("chunks of 450: %d parts", len(got))
	}
	if chunks(nil, 200) != nil {
		t.Fatal("chunks(nil) not empty")
	}
}
