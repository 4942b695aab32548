package placementtest

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"
)

// Proxy sits between a client and a Placement server: it counts requests
// by method and can make Placement look down (503 or dropped connections)
// or run a hook before forwarding a request, e.g. a concurrent writer
// bumping a generation.
type Proxy struct {
	URL string

	mu     sync.Mutex
	mode   Mode
	before func(*http.Request)
	counts map[string]int
}

// Mode is how the proxy treats requests.
type Mode int

const (
	// Pass forwards every request.
	Pass Mode = iota
	// Unavailable answers 503 to every request.
	Unavailable
	// Drop closes the connection without an answer.
	Drop
)

// NewProxy starts a proxy to target; it stops at cleanup.
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatalf("placementtest: proxy target: %v", err)
	}
	p := &Proxy{counts: map[string]int{}}
	rp := httputil.NewSingleHostReverseProxy(u)
	// uWSGI's http-socket closes idle connections without warning, so a
	// reused one can fail mid-request; one connection per request keeps
	// request counts exact.
	rp.Transport = &http.Transport{DisableKeepAlives: true}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		mode, before := p.mode, p.before
		p.counts[r.Method]++
		p.mu.Unlock()
		switch mode {
		case Unavailable:
			http.Error(w, "placement is down (test proxy)", http.StatusServiceUnavailable)
			return
		case Drop:
			if hj, ok := w.(http.Hijacker); ok {
				if c, _, err := hj.Hijack(); err == nil {
					_ = c.Close()
					return
				}
			}
			http.Error(w, "dropped", http.StatusBadGateway)
			return
		}
		if before != nil {
			before(r)
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	p.URL = hs.URL
	return p
}

// SetMode switches how requests are treated.
func (p *Proxy) SetMode(m Mode) {
	p.mu.Lock()
	p.mode = m
	p.mu.Unlock()
}

// SetBefore installs a hook run before each forwarded request (nil: none).
// The hook runs on the proxy's goroutine; it may call the server directly.
func (p *Proxy) SetBefore(f func(*http.Request)) {
	p.mu.Lock()
	p.before = f
	p.mu.Unlock()
}

// Counts returns requests seen by method since the last Reset.
func (p *Proxy) Counts() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]int, len(p.counts))
	for k, v := range p.counts {
		out[k] = v
	}
	return out
}

// Writes is the number of non-GET requests since the last Reset.
func (p *Proxy) Writes() int {
	n := 0
	for m, c := range p.Counts() {
		if m != http.MethodGet && m != http.MethodHead {
			n += c
		}
	}
	return n
}

// Total is the number of requests since the last Reset.
func (p *Proxy) Total() int {
	n := 0
	for _, c := range p.Counts() {
		n += c
	}
	return n
}

// Reset zeroes the counters.
func (p *Proxy) Reset() {
	p.mu.Lock()
	p.counts = map[string]int{}
	p.mu.Unlock()
}
