package novafull

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/testkit/placementtest"
	"github.com/placement-syncd/placement-syncd/testkit/svcproc"
)

// nova is the binary's Nova, started by the first test that asks.
var nova = Shared()

func TestMain(m *testing.M) { os.Exit(svcproc.RunMain(m, nova)) }

// TestNovaFull_BootAndDelete boots one server through Nova's scheduler on
// one fake compute reporting to our Placement, and deletes it: the
// harness's own check that the whole path works.
func TestNovaFull_BootAndDelete(t *testing.T) {
	n := nova.Get(t)
	ctx := context.Background()
	p := placementtest.StartOurs(t, placementtest.Options{})
	if err := n.UsePlacement(p.URL); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.StopComputes)
	start := time.Now()
	if err := n.StartComputes(ctx, Compute{Host: "harness-a"}); err != nil {
		t.Fatal(err)
	}
	t.Logf("compute up in %s", time.Since(start).Round(time.Millisecond))
	flavor, err := n.Flavor(ctx, "harness", 1, 512, 1)
	if err != nil {
		t.Fatal(err)
	}
	id, err := n.Boot(ctx, "harness-1", flavor)
	if err != nil {
		t.Fatal(err)
	}
	s, err := n.WaitServer(ctx, id, 120*time.Second, "ACTIVE")
	if err != nil {
		t.Fatalf("%v\n%s", err, n.Logs())
	}
	if s.Host != "harness-a" {
		t.Errorf("server on %q, want harness-a", s.Host)
	}
	code, body := p.Do(t, "GET", "/allocations/"+id, "1.39", nil)
	t.Logf("allocations: %d %s", code, body)
	if err := n.Delete(ctx, id, 60*time.Second); err != nil {
		t.Fatal(err)
	}
}
