package httpserve

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// serve runs h under lim on a loopback listener until the test ends and
// returns its address and a channel of the handler's body-read errors.
func serve(t *testing.T, lim Limits) (string, <-chan error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	bodyErr := make(chan error, 10)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.ReadAll(r.Body)
		bodyErr <- err
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
		}
	})}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); RunLimited(ctx, srv, ln, time.Second, lim) }()
	t.Cleanup(func() { cancel(); <-done })
	return ln.Addr().String(), bodyErr
}

// TestSlowBodyIsCutOff: a client that announces a body and then sends it
// too slowly loses its connection once ReadTimeout has passed, instead of
// holding it (and a handler) for as long as it likes.
func TestSlowBodyIsCutOff(t *testing.T) {
	addr, bodyErr := serve(t, Limits{ReadTimeout: 200 * time.Millisecond})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// The deadline only keeps a broken server from hanging the test.
	_ = c.SetDeadline(time.Now().Add(time.Minute))
	if _, err := io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"a\":"); err != nil {
		t.Fatal(err)
	}
	// Send nothing more: the server must give up on the body and close.
	select {
	case err := <-bodyErr:
		if err == nil {
			t.Fatal("the handler read a whole body that was never sent")
		}
	case <-time.After(time.Minute): // a safety net, far above the timeout
		t.Fatal("the server still waits for the body")
	}
	var ne net.Error
	if _, err := io.ReadAll(bufio.NewReader(c)); errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("the server kept the connection open")
	}
}

// TestIdleConnectionIsClosed: a kept-alive connection that sends nothing
// more is closed after IdleTimeout.
func TestIdleConnectionIsClosed(t *testing.T) {
	addr, _ := serve(t, Limits{IdleTimeout: 200 * time.Millisecond})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Minute))
	if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("idle connection: read %v, want EOF (closed by the server)", err)
	}
}

// TestLimitListener: with n connections open, the next Accept waits until
// one of them closes.
func TestLimitListener(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := LimitListener(inner, 2)
	defer ln.Close()
	accepted := make(chan net.Conn, 3)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}
	}()
	var clients []net.Conn
	for range 3 {
		c, err := net.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		clients = append(clients, c)
	}
	first, second := <-accepted, <-accepted
	defer second.Close()
	select {
	case c := <-accepted:
		c.Close()
		t.Fatal("a third connection was accepted while two were open")
	default:
	}
	first.Close()
	third := <-accepted // now there is room
	third.Close()
	if err := ln.Close(); err != nil && !strings.Contains(err.Error(), "closed") {
		t.Fatal(err)
	}
	if _, ok := <-accepted; ok {
		t.Fatal("Accept returned a connection after Close")
	}
}

func TestWithDefaults(t *testing.T) {
	got := Limits{WriteTimeout: time.Second}.WithDefaults()
	want := DefaultLimits()
	want.WriteTimeout = time.Second
	if got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}
