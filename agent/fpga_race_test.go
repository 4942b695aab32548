package agent_test

import (
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/placement-syncd/placement-syncd/agent"
	"github.com/placement-syncd/placement-syncd/drivers"
	"github.com/placement-syncd/placement-syncd/drivers/fpga"
	"github.com/placement-syncd/placement-syncd/testkit/placementtest"
)

// testProgramRace: an allocation lands after the usages were read and
// before the reservation is written. The programming is aborted (refused),
// the command never runs, and the reservation is released.
func testProgramRace(t *testing.T, srv *placementtest.Server, d *fpga.Driver, device, uuid string) {
	proxy := placementtest.NewProxy(t, srv.URL)
	e := newEnv(t, proxy.URL, []drivers.Driver{d}, nil)
	ctx := t.Context()
	if err := e.agent.SyncOnce(ctx); err != nil {
		t.Fatal(err)
	}
	consumer := nodeUUID(8, 2000)
	var once sync.Once
	proxy.SetBefore(func(r *http.Request) {
		if r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/"+uuid+"/inventories") {
			once.Do(func() { srv.Allocate(t, consumer, uuid, map[string]int{"FPGA": 1}) })
		}
	})
	defer srv.Deallocate(t, consumer)
	r, err := e.agent.Program(ctx, device, "raced", false)
	if !errors.Is(err, agent.ErrDeviceInUse) || r.Result != "refused" {
		t.Fatalf("allocation landed before the reservation: result %+v, err %v; want refused", r, err)
	}
	_, traits := srv.Traits(t, uuid)
	for _, tr := range traits {
		if strings.HasSuffix(tr, "_RACED") {
			t.Fatalf("the device was programmed: traits %v", traits)
		}
	}
	_, invs := srv.Inventories(t, uuid)
	if inv := invs["FPGA"]; inv["reserved"] != 0 {
		t.Fatalf("reservation not released after the abort: %v", invs)
	}
	if got := e.counter(t, "placement_syncd_agent_fpga_programs_total", "result", "refused"); got != 1 {
		t.Fatalf("programs_total{refused} = %v, want 1", got)
	}
}
