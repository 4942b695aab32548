// Package httpserve runs an http.Server until its context ends and then
// shuts it down gracefully: the one way every listener of the process
// (the API, /metrics, the agent's and the reconciler's endpoints) stops.
// It also bounds what a client can hold of a listener: every server gets
// read, write and idle timeouts and a connection limit.
package httpserve

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"
)

// Limits bound the time and the connections clients may hold. A zero
// field takes its value from DefaultLimits.
type Limits struct {
	// ReadHeaderTimeout bounds reading a request's headers.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds reading a whole request, body included: a
	// client that sends its body slowly is cut off.
	ReadTimeout time.Duration
	// WriteTimeout bounds a response, from the end of its request's
	// headers to its last byte (handling included): a client that stops
	// reading is cut off.
	WriteTimeout time.Duration
	// IdleTimeout bounds a kept-alive connection's wait for its next
	// request.
	IdleTimeout time.Duration
	// MaxConnections bounds the open connections; further ones wait in
	// the kernel's accept queue until one closes.
	MaxConnections int
}

// DefaultLimits are generous for any request this process serves, and
// keep a listener from being held open by clients that do nothing.
func DefaultLimits() Limits {
	return Limits{
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		WriteTimeout:      10 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		MaxConnections:    1024,
	}
}

// WithDefaults returns l with each zero field set from DefaultLimits.
func (l Limits) WithDefaults() Limits {
	d := DefaultLimits()
	pick := func(v, def time.Duration) time.Duration {
		if v == 0 {
			return def
		}
		return v
	}
	l.ReadHeaderTimeout = pick(l.ReadHeaderTimeout, d.ReadHeaderTimeout)
	l.ReadTimeout = pick(l.ReadTimeout, d.ReadTimeout)
	l.WriteTimeout = pick(l.WriteTimeout, d.WriteTimeout)
	l.IdleTimeout = pick(l.IdleTimeout, d.IdleTimeout)
	if l.MaxConnections == 0 {
		l.MaxConnections = d.MaxConnections
	}
	return l
}

// Run is RunLimited with DefaultLimits.
func Run(ctx context.Context, srv *http.Server, ln net.Listener, grace time.Duration) (served, shutdown error) {
	return RunLimited(ctx, srv, ln, grace, Limits{})
}

// RunLimited serves srv on ln, under lim (which replaces srv's own
// timeouts), until ctx ends or serving fails, then shuts srv down,
// letting in-flight requests run for up to grace. It returns how serving
// ended (nil after a clean shutdown) and the shutdown's error apart, for
// each caller to word and weigh as its own.
func RunLimited(ctx context.Context, srv *http.Server, ln net.Listener, grace time.Duration, lim Limits) (served, shutdown error) {
	lim = lim.WithDefaults()
	srv.ReadHeaderTimeout, srv.ReadTimeout = lim.ReadHeaderTimeout, lim.ReadTimeout
	srv.WriteTimeout, srv.IdleTimeout = lim.WriteTimeout, lim.IdleTimeout
	ln = LimitListener(ln, lim.MaxConnections)
	watchNewConns(srv)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err, nil
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), grace)
	defer cancel()
	shutdown = srv.Shutdown(sctx)
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		served = err
	}
	return served, shutdown
}
