package placementsrv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/placementsrv/store/sqlite"
)

// gateSwitch is an OwnerNovaGate the test flips.
type gateSwitch struct{ open atomic.Bool }

func (g *gateSwitch) OwnerNovaGateOpen() bool { return g.open.Load() }

// startServerWith is startTestServer with extra options.
func startServerWith(t *testing.T, opts Options) *testServer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "placement.db"), sqlite.Options{Migrate: true})
	if err != nil {
		cancel()
		t.Fatalf("open store: %v", err)
	}
	opts.Store = st
	srv, err := New(opts)
	if err != nil {
		cancel()
		t.Fatalf("new server: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		cancel()
		t.Fatalf("listen: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, ln, 5*time.Second) }()
	ts := &testServer{URL: "http://" + ln.Addr().String(), Client: &http.Client{Timeout: 30 * time.Second}, Store: st}
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("server: %v", err)
		}
		ts.Client.CloseIdleConnections()
		_ = st.Close()
	})
	return ts
}

func TestOwnerNovaPrefilter(t *testing.T) {
	gate := &gateSwitch{}
	tests := []struct {
		name  string
		mode  string
		open  bool
		user  string
		query string
		want  int
	}{
		{name: "off", mode: PrefilterOff, user: "nova", want: 3},
		{name: "on: scheduler gets Nova's only", mode: PrefilterOn, user: "nova", want: 1},
		{name: "on: other users unfiltered", mode: PrefilterOn, user: "admin", want: 3},
		{name: "on: request naming OWNER_CYBORG kept as is", mode: PrefilterOn, user: "nova", query: "&required=OWNER_CYBORG", want: 1},
		{name: "on: request forbidding OWNER_NOVA kept as is", mode: PrefilterOn, user: "nova", query: "&root_required=!OWNER_NOVA", want: 2},
		{name: "auto, gate closed: unfiltered", mode: PrefilterAuto, user: "nova", want: 3},
		{name: "auto, gate open: filtered", mode: PrefilterAuto, open: true, user: "nova", want: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := startServerWith(t, Options{OwnerNovaPrefilter: tt.mode, OwnerNovaGate: gate, SchedulerUsers: []string{"nova"}})
			for i, owner := range []string{"OWNER_NOVA", "OWNER_CYBORG", ""} {
				u := fmt.Sprintf("00000000-0000-0000-0000-00000000000%d", i+1)
				ts.must(t, 200, call{Method: "POST", Path: "/resource_providers", Version: "1.39", Body: fmt.Sprintf(`{"name":"rp%d","uuid":%q}`, i, u)})
				ts.must(t, 200, call{Method: "PUT", Path: "/resource_providers/" + u + "/inventories", Version: "1.39",
					Body: `{"resource_provider_generation":0,"inventories":{"VCPU":{"total":8}}}`})
				if owner != "" {
					ts.must(t, 200, call{Method: "PUT", Path: "/resource_providers/" + u + "/traits", Version: "1.39",
						Body: fmt.Sprintf(`{"resource_provider_generation":1,"traits":[%q]}`, owner)})
				}
			}
			gate.open.Store(tt.open)
			r := ts.must(t, 200, call{Method: "GET", Path: "/allocation_candidates?resources=VCPU:1" + tt.query, Version: "1.39",
				Headers: map[string]string{"X-Auth-Token": tt.user, "X-Roles": "admin"}})
			got := len(r.JSON(t)["allocation_requests"].([]any))
			if got != tt.want {
				t.Fatalf("%d candidates, want %d: %s", got, tt.want, r.Body)
			}
		})
	}
	if _, err := New(Options{Store: startTestServer(t).Store, OwnerNovaPrefilter: PrefilterAuto}); err == nil {
		t.Fatal("auto without a gate accepted")
	}
}
