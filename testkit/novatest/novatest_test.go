package novatest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"testing"

	"github.com/placement-syncd/placement-syncd/testkit/svcproc"
)

var nova = Shared()

func TestMain(m *testing.M) { os.Exit(svcproc.RunMain(m, nova, svcproc.NoLeaks())) }

type servicesAnswer struct {
	Services []struct {
		Host       string `json:"host"`
		Status     string `json:"status"`
		ForcedDown bool   `json:"forced_down"`
	} `json:"services"`
}

// listServices reads os-services at microversion v.
func listServices(t *testing.T, n *Nova, v string) map[string]string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, n.Endpoint+"/os-services?binary=nova-compute", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Auth-Token", Token)
	req.Header.Set("OpenStack-API-Version", "compute "+v)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out servicesAnswer
	if err := decode(resp, &out); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range out.Services {
		got[s.Host] = s.Status
	}
	return got
}

// TestNova_CellsAndOracle: computes as rows in two cells are listed by the
// real nova-api once discover_hosts maps them; Nova's own minimum is the
// lowest version; an unreadable cell's computes are left out below 2.69
// and listed UNKNOWN from 2.69, and the oracle raises.
func TestNova_CellsAndOracle(t *testing.T) {
	ctx := context.Background()
	n := nova.Get(t)
	if err := n.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := n.AddComputes(ctx, Compute{Cell: "cell1", Host: "h1", Version: 73}, Compute{Cell: "cell2", Host: "h2", Version: 72}); err != nil {
		t.Fatal(err)
	}
	if got := listServices(t, n, "2.69"); got["h1"] != "enabled" || got["h2"] != "enabled" {
		t.Fatalf("os-services 2.69 = %v, want h1 and h2 enabled", got)
	}
	v, raised, err := n.MinimumVersion(ctx)
	if err != nil || raised || v != 72 {
		t.Fatalf("oracle = %d, raised %v, %v; want 72", v, raised, err)
	}
	if err := n.Unreadable(ctx, "cell2"); err != nil {
		t.Fatal(err)
	}
	if got := listServices(t, n, "2.53"); len(got) != 1 || got["h1"] == "" {
		t.Errorf("os-services 2.53 with cell2 unreadable = %v, want h1 only", got)
	}
	if got := listServices(t, n, "2.69"); got["h2"] != "UNKNOWN" {
		t.Errorf("os-services 2.69 with cell2 unreadable = %v, want h2 UNKNOWN", got)
	}
	if _, raised, err := n.MinimumVersion(ctx); err != nil || !raised {
		t.Errorf("oracle with cell2 unreadable: raised %v, %v; want raised", raised, err)
	}
}

// TestNova_APIWrites: aggregates, disable, force-down and delete go
// through the real API.
func TestNova_APIWrites(t *testing.T) {
	ctx := context.Background()
	n := nova.Get(t)
	if err := n.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := n.AddComputes(ctx, Compute{Cell: "cell1", Host: "w1", Version: 73}, Compute{Cell: "cell2", Host: "w2", Version: 73}); err != nil {
		t.Fatal(err)
	}
	agg, err := n.CreateAggregate(ctx, "rack1")
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []error{n.AddHost(ctx, agg.ID, "w1"), n.AddHost(ctx, agg.ID, "w2"), n.RemoveHost(ctx, agg.ID, "w1"),
		n.UpdateService(ctx, "w1", map[string]any{"status": "disabled"}),
		n.UpdateService(ctx, "w2", map[string]any{"forced_down": true})} {
		if step != nil {
			t.Fatal(step)
		}
	}
	var got struct {
		Aggregate Aggregate `json:"aggregate"`
	}
	if err := n.Call(ctx, http.StatusOK, http.MethodGet, fmt.Sprintf("/os-aggregates/%d", agg.ID), nil, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Aggregate.Hosts) != 1 || got.Aggregate.Hosts[0] != "w2" || got.Aggregate.UUID == "" {
		t.Errorf("aggregate = %+v, want hosts [w2] and a uuid", got.Aggregate)
	}
	if s := listServices(t, n, "2.53"); s["w1"] != "disabled" {
		t.Errorf("services = %v, want w1 disabled", s)
	}
	if err := n.RemoveHost(ctx, agg.ID, "w2"); err != nil {
		t.Fatal(err)
	}
	if err := n.DeleteService(ctx, "w2"); err != nil {
		t.Fatalf("%v\nnova-api log:\n%s", err, svcproc.Tail(n.Log(), 4000))
	}
	if s := listServices(t, n, "2.53"); s["w2"] != "" {
		t.Errorf("services after delete = %v, want no w2", s)
	}
}

func decode(resp *http.Response, out any) error {
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}
