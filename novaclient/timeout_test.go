package novaclient

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
)

// TestNova_Timeouts: a compute API that never answers and a cell database
// that accepts connections and never speaks (faults a real service is not
// made to produce here: doubles) fail within their own timeouts, as Nova
// unavailable.
func TestNova_Timeouts(t *testing.T) {
	ctx := context.Background()
	release := make(chan struct{})
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(release); hung.Close() })
	pc := &gophercloud.ProviderClient{}
	pc.SetToken("admin")
	api := NewAPI(&gophercloud.ServiceClient{ProviderClient: pc, Endpoint: gophercloud.NormalizeURL(hung.URL)})
	api.Timeout = 200 * time.Millisecond
	if _, err := api.Computes(ctx); !errors.Is(err, ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("hung compute API: %v, want Nova unavailable after the deadline", err)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan net.Conn, 16)
	go func() {
		defer close(accepted)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		for c := range accepted {
			c.Close()
		}
	})
	cells := CellDatabases{Cells: []CellDatabase{{Name: "silent", DSN: "mysql+pymysql://nova@" + ln.Addr().String() + "/nova_cell1?charset=utf8"}}, Complete: true,
		QueryTimeout: 200 * time.Millisecond}
	var unreadable *UnreadableCellsError
	if _, err := cells.Computes(ctx); !errors.As(err, &unreadable) || unreadable.Names()[0] != "silent" || !errors.Is(err, ErrUnavailable) {
		t.Errorf("silent cell database: %v, want cell silent unreadable", err)
	}
}
