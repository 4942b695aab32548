package ironictest

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// StartConductor starts one more ironic-conductor, in conductor group
// group, and stops it at the test's cleanup (after the nodes enrolled
// later in the test are deleted). JSON-RPC reaches a conductor at its
// host name on the port all conductors share, so each listens on an
// address of its own: 127.0.0.2, 127.0.0.3, …
func (ir *Ironic) StartConductor(t testing.TB, group string) {
	t.Helper()
	ir.conductors++
	host := fmt.Sprintf("127.0.0.%d", 1+ir.conductors)
	conf, err := renderConfig(ir.dir, "ironic-"+group+".conf", ir.opts, ir.apiPort, ir.rpcPort, host, group)
	if err != nil {
		t.Fatal(err)
	}
	p, err := launch(ir.dir, "ironic-conductor", conf, "ironic-conductor-"+group)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("ironictest: conductor of group %s, log:\n%s", group, p.LogTail(4000))
		}
		if err := p.stop(); err != nil {
			t.Error(err)
		}
	})
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		if ir.conductorIn(t.Context(), host, group) {
			// The API's hash ring is refreshed every second.
			time.Sleep(1500 * time.Millisecond)
			return
		}
		if exited, err := p.Exited(); exited {
			t.Fatalf("ironictest: conductor of group %s exited during start-up: %v%s", group, err, ir.logTails())
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("ironictest: conductor of group %s not alive after 3 minutes", group)
}

func (ir *Ironic) conductorIn(ctx context.Context, host, group string) bool {
	var doc struct {
		Conductors []struct {
			Hostname       string `json:"hostname"`
			ConductorGroup string `json:"conductor_group"`
			Alive          bool   `json:"alive"`
		} `json:"conductors"`
	}
	if err := ir.getJSON(ctx, "/v1/conductors", &doc); err != nil {
		return false
	}
	for _, c := range doc.Conductors {
		if c.Hostname == host && c.ConductorGroup == group && c.Alive {
			return true
		}
	}
	return false
}
