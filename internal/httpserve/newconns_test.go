package httpserve

import (
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// TestShutdownClosesUnusedConnections: a connection that never sent a
// request (a client pool's spare) does not hold a shutdown past its grace,
// while a request in flight still finishes.
func TestShutdownClosesUnusedConnections(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	started, finish := make(chan struct{}), make(chan struct{})
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-finish
		_, _ = io.WriteString(w, "done")
	})}
	ctx, cancel := context.WithCancel(context.Background())
	type result struct{ served, shutdown error }
	res := make(chan result, 1)
	go func() {
		s, sh := RunLimited(ctx, srv, ln, 2*time.Second, Limits{})
		res <- result{s, sh}
	}()
	spare, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer spare.Close()
	answer := make(chan string, 1)
	go func() {
		resp, err := http.Get("http://" + ln.Addr().String() + "/")
		if err != nil {
			answer <- err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		answer <- string(b)
	}()
	<-started
	cancel()
	time.Sleep(100 * time.Millisecond) // let the shutdown begin while the request runs
	close(finish)
	if got := <-answer; got != "done" {
		t.Errorf("the request in flight got %q, want it to finish", got)
	}
	r := <-res
	if r.served != nil || r.shutdown != nil {
		t.Fatalf("RunLimited = %v, %v; want a clean shutdown although a connection never sent a request", r.served, r.shutdown)
	}
	if _, err := spare.Read(make([]byte, 1)); err == nil {
		t.Error("the unused connection is still open after the shutdown")
	}
}
