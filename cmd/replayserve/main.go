// Command replayserve is the physical ceiling for read benchmarks: an
// HTTP server that answers every GET with the identical bytes another
// server gave for the same request, pre-rendered and held in memory.
// Run against it over the same loopback with the same client (e.g. the
// read benchmark of docs/performance.md, with --reuse), it
// measures what the network stack, the HTTP server and the client cost
// with no parsing, search or rendering; a real server's throughput as a
// fraction of it is how close to that ceiling the server is.
//
//	go run ./cmd/replayserve --origin http://127.0.0.1:18620 --listen 127.0.0.1:18630
//
// The first request for a path (method, URI and OpenStack-API-Version)
// goes to the origin; a 200 answer's status, headers (Date aside) and body
// are kept and replayed from then on, so the benchmark's probe and warm-up
// fill the cache before it measures. Other answers are not kept, and
// anything but GET and HEAD is passed through uncached.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"sync"
	"time"
)

func main() {
	origin := flag.String("origin", "", "base URL of the server whose answers are replayed")
	listen := flag.String("listen", "127.0.0.1:18630", "address to serve on")
	flag.Parse()
	if *origin == "" {
		fmt.Fprintln(os.Stderr, "replayserve: --origin is required")
		os.Exit(2)
	}
	rp := &replayer{origin: *origin, client: &http.Client{Timeout: time.Minute}, answers: map[string]*answer{}}
	srv := &http.Server{Addr: *listen, Handler: rp, ReadHeaderTimeout: 10 * time.Second}
	log.Printf("replaying %s on %s", *origin, *listen)
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
}

// answer is one recorded response.
type answer struct {
	status int
	header http.Header
	body   []byte
}

type replayer struct {
	origin  string
	client  *http.Client
	mu      sync.RWMutex
	answers map[string]*answer
}

func (rp *replayer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	cacheable := r.Method == http.MethodGet || r.Method == http.MethodHead
	key := r.Method + " " + r.URL.RequestURI() + " " + r.Header.Get("OpenStack-API-Version")
	rp.mu.RLock()
	a := rp.answers[key]
	rp.mu.RUnlock()
	if a == nil {
		var err error
		if a, err = rp.fetch(r); err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		if cacheable && a.status == http.StatusOK {
			rp.mu.Lock()
			rp.answers[key] = a
			rp.mu.Unlock()
		}
	}
	h := w.Header()
	for k, v := range a.header {
		h[k] = v
	}
	w.WriteHeader(a.status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(a.body)
	}
}

// fetch sends r to the origin and records the answer.
func (rp *replayer) fetch(r *http.Request) (*answer, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(r.Context(), r.Method, rp.origin+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header = r.Header.Clone()
	resp, err := rp.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	h := resp.Header.Clone()
	h.Del("Date") // net/http sets its own
	return &answer{status: resp.StatusCode, header: h, body: b}, nil
}
