package ironic_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"

	"github.com/placement-syncd/placement-syncd/drivers"
	"github.com/placement-syncd/placement-syncd/drivers/ironic"
	"github.com/placement-syncd/placement-syncd/testkit/ironictest"
)

func TestUnavailable(t *testing.T) {
	base := nodes.Node{UUID: "u", PowerState: "power off", ProvisionState: "available", ResourceClass: "x"}
	tests := []struct {
		name         string
		edit         func(*nodes.Node)
		reserveInUse bool
		want         string
	}{
		{"available", func(*nodes.Node) {}, true, ""},
		{"no provision state", func(n *nodes.Node) { n.ProvisionState = "" }, true, ""},
		{"maintenance", func(n *nodes.Node) { n.Maintenance = true }, true, drivers.ReasonMaintenance},
		{"cleaning", func(n *nodes.Node) { n.ProvisionState = "cleaning" }, true, drivers.ReasonCleaning},
		{"clean wait", func(n *nodes.Node) { n.ProvisionState = "clean wait" }, true, drivers.ReasonCleaning},
		{"clean failed", func(n *nodes.Node) { n.ProvisionState = "clean failed" }, true, drivers.ReasonCleaning},
		{"power error", func(n *nodes.Node) { n.PowerState = "error" }, true, drivers.ReasonPower},
		{"power unknown", func(n *nodes.Node) { n.PowerState = "" }, true, drivers.ReasonPower},
		{"active", func(n *nodes.Node) { n.ProvisionState = "active"; n.InstanceUUID = "i" }, true, drivers.ReasonInUse},
		{"deleting with instance", func(n *nodes.Node) { n.ProvisionState = "deleting"; n.InstanceUUID = "i" }, true, drivers.ReasonInUse},
		{"active, reserve in use off", func(n *nodes.Node) { n.ProvisionState = "active"; n.InstanceUUID = "i" }, false, drivers.ReasonNotAvailable},
		{"maintenance with instance", func(n *nodes.Node) { n.Maintenance = true; n.InstanceUUID = "i" }, true, drivers.ReasonMaintenance},
		{"deleting", func(n *nodes.Node) { n.ProvisionState = "deleting" }, true, drivers.ReasonNotAvailable},
		{"manageable", func(n *nodes.Node) { n.ProvisionState = "manageable" }, true, drivers.ReasonNotAvailable},
		{"instance on available node", func(n *nodes.Node) { n.InstanceUUID = "i" }, true, drivers.ReasonInUse},
		{"instance, reserve in use off", func(n *nodes.Node) { n.InstanceUUID = "i" }, false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := base
			tc.edit(&n)
			if got := ironic.Unavailable(n, tc.reserveInUse); got != tc.want {
				t.Fatalf("Unavailable = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestObserve_File(t *testing.T) {
	d, err := ironic.New(t.Context(), ironic.Options{File: "testdata/nodes_detail.json"})
	if err != nil {
		t.Fatal(err)
	}
	tree, err := d.Observe(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := tree.Validate(); err != nil {
		t.Fatal(err)
	}
	if len(tree.Providers) != 2 {
		t.Fatalf("%d providers, want 2 (the node without a resource class is skipped)", len(tree.Providers))
	}
	if !slices.Equal(tree.Keep, []string{"3be26c0b-03f2-4d2e-ae87-c02d7f33c123"}) {
		t.Fatalf("kept %v, want the node without a resource class", tree.Keep)
	}
	p := tree.Providers[0]
	if p.UUID != "1be26c0b-03f2-4d2e-ae87-c02d7f33c123" || p.Name != p.UUID || !p.Parent.IsZero() || p.Owner != drivers.OwnerNova {
		t.Fatalf("provider = %+v", p)
	}
	inv, ok := p.Inventories["CUSTOM_BAREMETAL_GOLD_1"]
	if !ok || len(p.Inventories) != 1 || inv.Total != 1 || inv.MinUnit != 1 || inv.MaxUnit != 1 || inv.StepSize != 1 || inv.AllocationRatio != 1 || inv.Unavailable != "" {
		t.Fatalf("inventories = %+v", p.Inventories)
	}
	if want := []string{"COMPUTE_NODE", "CUSTOM_RAID5", "HW_CPU_X86_VMX", "OWNER_NOVA"}; !slices.Equal(p.Traits, want) {
		t.Fatalf("traits = %v, want %v", p.Traits, want)
	}
	if got := tree.Providers[1].Inventories["CUSTOM_BAREMETAL_GOLD_1"].Unavailable; got != drivers.ReasonCleaning {
		t.Fatalf("clean wait node: unavailable %q", got)
	}
}

func TestObserve_IronicDouble(t *testing.T) {
	double := ironictest.NewIronicDouble(t,
		ironictest.Node{UUID: "1be26c0b-03f2-4d2e-ae87-c02d7f33c123", ResourceClass: "gold", ProvisionState: "available", PowerState: "power off", ConductorGroup: "rack1"},
		ironictest.Node{UUID: "2be26c0b-03f2-4d2e-ae87-c02d7f33c123", ResourceClass: "gold", ProvisionState: "available", PowerState: "power off", ConductorGroup: "rack2"},
	)
	t.Run("all", func(t *testing.T) {
		d, err := ironic.New(t.Context(), ironic.Options{Endpoint: double.URL})
		if err != nil {
			t.Fatal(err)
		}
		tree, err := d.Observe(t.Context())
		if err != nil || len(tree.Providers) != 2 {
			t.Fatalf("tree = %+v, %v", tree, err)
		}
	})
	t.Run("conductor group", func(t *testing.T) {
		d, err := ironic.New(t.Context(), ironic.Options{Endpoint: double.URL, ConductorGroup: "rack2"})
		if err != nil {
			t.Fatal(err)
		}
		tree, err := d.Observe(t.Context())
		if err != nil || len(tree.Providers) != 1 || tree.Providers[0].UUID != "2be26c0b-03f2-4d2e-ae87-c02d7f33c123" {
			t.Fatalf("tree = %+v, %v", tree, err)
		}
	})
	t.Run("down", func(t *testing.T) {
		double.SetDown(true)
		defer double.SetDown(false)
		d, err := ironic.New(t.Context(), ironic.Options{Endpoint: double.URL})
		if err != nil {
			t.Fatal(err)
		}
		if tree, err := d.Observe(t.Context()); err == nil {
			t.Fatalf("Observe with the Ironic API down = %+v, want an error", tree)
		}
	})
}

func TestNew_Invalid(t *testing.T) {
	tests := map[string]ironic.Options{
		"no source":       {},
		"two sources":     {File: "x", Endpoint: "http://x"},
		"old version":     {File: "x", Microversion: "1.45"},
		"garbage version": {File: "x", Microversion: "new"},
		"trailing junk":   {File: "x", Microversion: "1.46x"},
		"shard on 1.81":   {File: "x", Microversion: "1.81", Shard: "s1"},
		"shard default":   {File: "x", Shard: "s1"},
		"page size":       {File: "x", PageSize: -1},
	}
	for name, o := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := ironic.New(t.Context(), o); err == nil {
				t.Fatal("New accepted invalid options")
			}
		})
	}
}

func TestNew_Latest(t *testing.T) {
	for _, v := range []string{"latest", "1.46", "1.82", "2.0"} {
		if _, err := ironic.New(t.Context(), ironic.Options{File: "x", Microversion: v, Shard: "s1"}); (err != nil) != (v == "1.46") {
			t.Errorf("microversion %s with a shard: %v", v, err)
		}
	}
}

func FuzzParseNodes(f *testing.F) {
	seed, err := os.ReadFile(filepath.Join("testdata", "nodes_detail.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte(`{"nodes":[]}`))
	f.Add([]byte(`{"nodes":[{"uuid":"x","resource_class":"a b","power_state":null}]}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ns, err := ironic.ParseNodes(bytes.NewReader(data))
		if err != nil {
			return
		}
		for _, n := range ns {
			p, ok := ironic.Provider(n, true)
			if !ok {
				continue
			}
			for rc, inv := range p.Inventories {
				if inv.Total != 1 || !drivers.IsCustom(rc) && len(rc) <= 255 {
					t.Fatalf("node %q gave inventory %s %+v", n.UUID, rc, inv)
				}
			}
		}
	})
}

// TestObserve_DoublePages: a conductor group's nodes over pages of 2.
// Ironic's next link drops the conductor_group filter, so a driver that
// followed it would report the other group's nodes from page 2 on.
func TestObserve_DoublePages(t *testing.T) {
	var ns []ironictest.Node
	for i := range 7 {
		group := []string{"rack1", "rack2"}[i%2]
		ns = append(ns, ironictest.Node{UUID: fmt.Sprintf("%08d-03f2-4d2e-ae87-c02d7f33c123", i), ResourceClass: "gold",
			ProvisionState: "available", PowerState: "power off", ConductorGroup: group})
	}
	double := ironictest.NewIronicDouble(t, ns...)
	double.SetMaxLimit(2)
	d, err := ironic.New(t.Context(), ironic.Options{Endpoint: double.URL, ConductorGroup: "rack1"})
	if err != nil {
		t.Fatal(err)
	}
	tree, err := d.Observe(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range tree.Providers {
		got = append(got, p.UUID)
	}
	want := []string{ns[0].UUID, ns[2].UUID, ns[4].UUID, ns[6].UUID}
	if !slices.Equal(got, want) {
		t.Fatalf("reported %v, want %v", got, want)
	}
	// Pages of 2, 2, then an empty one after the last full page.
	if got := double.Requests(); got != 3 {
		t.Fatalf("%d requests, want 3", got)
	}
}

// TestDeferToNova: with DeferToNova every node's provider carries Nova's
// capability traits as DeferTo, without it none does.
func TestDeferToNova(t *testing.T) {
	for _, on := range []bool{true, false} {
		d, err := ironic.New(t.Context(), ironic.Options{File: "testdata/nodes_detail.json", DeferToNova: on})
		if err != nil {
			t.Fatal(err)
		}
		tree, err := d.Observe(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if len(tree.Providers) == 0 {
			t.Fatal("no provider observed")
		}
		for _, p := range tree.Providers {
			if want := map[bool][]string{true: ironic.NovaComputeTraits()}[on]; !slices.Equal(p.DeferTo, want) {
				t.Errorf("DeferToNova %v: %s DeferTo %v, want %v", on, p.UUID, p.DeferTo, want)
			}
		}
	}
}
