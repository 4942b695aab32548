package agent_test

import (
	"testing"

	"github.com/placement-syncd/placement-syncd/drivers"
	"github.com/placement-syncd/placement-syncd/testkit/ironictest"
	"github.com/placement-syncd/placement-syncd/testkit/placementtest"
)

// TestIntegration runs one suite against our server and against the
// reference OpenStack Placement 8.0.0; both must pass.
func TestIntegration(t *testing.T) {
	for _, kind := range placementtest.Kinds() {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			srv := placementtest.Start(t, kind)
			t.Run("ironic lifecycle", func(t *testing.T) { testIronicLifecycle(t, srv) })
			t.Run("maintenance", func(t *testing.T) { testMaintenance(t, srv) })
			t.Run("faults", func(t *testing.T) { testFaults(t, srv) })
			t.Run("fpga", func(t *testing.T) { testFPGA(t, srv) })
			t.Run("retire", func(t *testing.T) { testRetire(t, srv) })
			t.Run("fpga durable", func(t *testing.T) { testFPGADurable(t, srv) })
		})
	}
}

const goldRC = "CUSTOM_BAREMETAL_GOLD"

// checkNode asserts the node's inventory exists with reserved as wanted.
func checkNode(t *testing.T, srv *placementtest.Server, uuid string, reserved float64) {
	t.Helper()
	_, invs := srv.Inventories(t, uuid)
	inv, ok := invs[goldRC]
	if !ok {
		t.Fatalf("node %s: inventory %s missing (deleted?): %v", uuid, goldRC, invs)
	}
	if inv["total"] != 1 || inv["reserved"] != reserved || inv["min_unit"] != 1 || inv["max_unit"] != 1 || inv["step_size"] != 1 || inv["allocation_ratio"] != 1 {
		t.Fatalf("node %s: inventory %v, want total 1 reserved %v", uuid, inv, reserved)
	}
}

func testIronicLifecycle(t *testing.T, srv *placementtest.Server) {
	node := nodeUUID(1, 1)
	instance := nodeUUID(1, 1000)
	double := ironictest.NewIronicDouble(t, ironictest.Node{
		UUID: node, ResourceClass: "baremetal-gold", ProvisionState: "available", PowerState: "power off",
		Traits: []string{"CUSTOM_RAID5"},
	})
	e := newEnv(t, srv.URL, []drivers.Driver{ironicDriver(t, double)}, nil)
	ctx := t.Context()
	if err := e.agent.SyncOnce(ctx); err != nil {
		t.Fatal(err)
	}
	checkNode(t, srv, node, 0)
	_, traits := srv.Traits(t, node)
	if len(traits) != 3 {
		t.Fatalf("traits %v, want COMPUTE_NODE CUSTOM_RAID5 OWNER_NOVA", traits)
	}

	steps := []struct {
		name     string
		edit     func(*ironictest.Node)
		before   func()
		reserved float64
	}{
		{"active with instance", func(n *ironictest.Node) {
			n.ProvisionState, n.PowerState, n.InstanceUUID = "active", "power on", instance
		}, func() { srv.Allocate(t, instance, node, map[string]int{goldRC: 1}) }, 1},
		// Reserved before the allocation goes (LP#1974070): deleting keeps
		// the node held back while the instance's allocation still exists.
		{"deleting", func(n *ironictest.Node) { n.ProvisionState = "deleting" }, nil, 1},
		{"cleaning", func(n *ironictest.Node) { n.ProvisionState, n.InstanceUUID = "cleaning", "" }, func() { srv.Deallocate(t, instance) }, 1},
		{"clean wait", func(n *ironictest.Node) { n.ProvisionState = "clean wait" }, nil, 1},
		{"available", func(n *ironictest.Node) { n.ProvisionState, n.PowerState = "available", "power off" }, nil, 0},
	}
	for _, s := range steps {
		if s.before != nil {
			s.before()
		}
		double.Update(node, s.edit)
		if err := e.agent.SyncOnce(ctx); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		checkNode(t, srv, node, s.reserved)
		if s.name == "active with instance" {
			if got := e.counter(t, "placement_syncd_agent_unavailable_resources", "reason", drivers.ReasonInUse); got != 1 {
				t.Fatalf("active node with an instance: unavailable{in_use} = %v, want 1", got)
			}
		}
		// A second pass with nothing changed writes nothing.
		if err := e.agent.SyncOnce(ctx); err != nil {
			t.Fatalf("%s (again): %v", s.name, err)
		}
		if r, _ := e.agent.LastResults(); r[0].Writes != 0 {
			t.Fatalf("%s: steady pass wrote %d times", s.name, r[0].Writes)
		}
	}
}

func testMaintenance(t *testing.T, srv *placementtest.Server) {
	node := nodeUUID(2, 1)
	double := ironictest.NewIronicDouble(t, ironictest.Node{UUID: node, ResourceClass: "baremetal-gold", ProvisionState: "available", PowerState: "power off"})
	e := newEnv(t, srv.URL, []drivers.Driver{ironicDriver(t, double)}, nil)
	ctx := t.Context()
	for i, m := range []bool{false, true, false, true, false} {
		double.Update(node, func(n *ironictest.Node) { n.Maintenance = m })
		if err := e.agent.SyncOnce(ctx); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		want := 0.0
		if m {
			want = 1
		}
		checkNode(t, srv, node, want)
		if got := e.counter(t, "placement_syncd_agent_unavailable_resources", "reason", drivers.ReasonMaintenance); got != want {
			t.Fatalf("step %d: unavailable{maintenance} = %v, want %v", i, got, want)
		}
	}
}
