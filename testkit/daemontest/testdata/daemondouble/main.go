// Command daemondouble is a double of placement-syncd serve for the
// harness's own tests: it listens on a loopback port, says so in
// serve's start-up line, counts requests on /metrics, echoes the token
// and microversion a request carried, and stops on SIGTERM.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	os.Exit(serve(ctx))
}

func serve(ctx context.Context) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	var n atomic.Int64
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" {
			fmt.Fprintf(w, "# HELP double_requests_total Requests answered.\n# TYPE double_requests_total counter\ndouble_requests_total %d\n", n.Load())
			return
		}
		n.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTeapot)
		_ = json.NewEncoder(w).Encode(map[string]string{"token": r.Header.Get("X-Auth-Token"),
			"version": r.Header.Get("OpenStack-API-Version"), "type": r.Header.Get("Content-Type")})
	})}
	_ = json.NewEncoder(os.Stderr).Encode(map[string]string{"msg": "placement-syncd started", "listen": ln.Addr().String()})
	go func() { <-ctx.Done(); _ = srv.Close() }()
	_ = srv.Serve(ln)
	_ = json.NewEncoder(os.Stderr).Encode(map[string]string{"msg": "placement-syncd stopped"})
	return 0
}
