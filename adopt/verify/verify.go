// Package verify proves that two Placement services give the same
// answers: it walks every resource provider (inventories, usages, traits,
// aggregates, allocations), every consumer's allocations, every project's
// and user's usages, the traits and resource classes, and a set of
// allocation candidate queries built from the data, on both, over HTTP,
// and reports every difference. 'db verify' runs it after an import or
// an export; it only reads.
package verify

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/placement-syncd/placement-syncd/microversion"
)

// Server is one Placement endpoint.
type Server struct {
	URL   string // base URL, e.g. http://127.0.0.1:8778
	Token string // sent as X-Auth-Token (noauth2: "admin")
}

// Options configures Run.
type Options struct {
	Ref, Ours Server
	Client    *http.Client
	// Parallel is how many requests run at once on each side (default 4).
	Parallel int
	// Progress, when set, is told each stage as it starts.
	Progress func(stage string, requests int)
}

// Diff is one difference: the request, where in its answer, and both
// values ("absent" when one side has none).
type Diff struct {
	Path, Where, Ref, Ours string
}

func (d Diff) String() string {
	return fmt.Sprintf("GET %s: %s: reference %s, ours %s", d.Path, d.Where, d.Ref, d.Ours)
}

// Report is what Run found.
type Report struct {
	Requests         int // per side
	Providers        int
	Consumers        int
	Projects         int
	CandidateQueries int
	Diffs            []Diff
}

// Run walks both servers. An error means the walk could not finish (a
// server unreachable, an answer that is not JSON); differences are in the
// report.
func Run(ctx context.Context, opts Options) (*Report, error) {
	if opts.Client == nil {
		opts.Client = &http.Client{Timeout: 5 * time.Minute}
	}
	if opts.Parallel <= 0 {
		opts.Parallel = 4
	}
	w := &walker{opts: opts, rep: &Report{}}
	if err := w.run(ctx); err != nil {
		return nil, err
	}
	sort.SliceStable(w.rep.Diffs, func(i, j int) bool { return w.rep.Diffs[i].Path < w.rep.Diffs[j].Path })
	return w.rep, nil
}

// answer is one server's answer to a GET.
type answer struct {
	status int
	body   any
}

type walker struct {
	opts Options
	mu   sync.Mutex
	rep  *Report
}

func (w *walker) get(ctx context.Context, s Server, path string) (answer, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(s.URL, "/")+path, nil)
	if err != nil {
		return answer{}, err
	}
	req.Header.Set("X-Auth-Token", s.Token)
	// Every request asks for the highest microversion, the newest of
	// Placement 8.0.0 and 15.0.0 alike, which shows the most (consumer
	// types, generations, roots).
	req.Header.Set("OpenStack-API-Version", "placement "+microversion.Max.String())
	req.Header.Set("Accept", "application/json")
	resp, err := w.opts.Client.Do(req)
	if err != nil {
		return answer{}, fmt.Errorf("GET %s: %w", req.URL, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return answer{}, fmt.Errorf("GET %s: %w", req.URL, err)
	}
	v, err := decode(b)
	if err != nil {
		return answer{}, fmt.Errorf("GET %s: status %d, body is not JSON: %w", req.URL, resp.StatusCode, err)
	}
	return answer{status: resp.StatusCode, body: v}, nil
}

// bodies are both servers' answer bodies to one request.
type bodies struct{ ref, ours any }

// compare GETs path on both servers, records the differences and returns
// both answer bodies.
func (w *walker) compare(ctx context.Context, path string) (bodies, error) {
	var ref, ours answer
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) { ref, err = w.get(gctx, w.opts.Ref, path); return err })
	g.Go(func() (err error) { ours, err = w.get(gctx, w.opts.Ours, path); return err })
	if err := g.Wait(); err != nil {
		return bodies{}, err
	}
	d := &differ{path: path}
	if ref.status != ours.status {
		d.add("status", fmt.Sprint(ref.status), fmt.Sprint(ours.status))
	} else {
		d.walk("$", ref.body, ours.body)
	}
	w.mu.Lock()
	w.rep.Requests++
	w.rep.Diffs = append(w.rep.Diffs, d.diffs...)
	w.mu.Unlock()
	return bodies{ref.body, ours.body}, nil
}

// compareAll compares every path, opts.Parallel at a time, and returns
// the answer bodies by path.
func (w *walker) compareAll(ctx context.Context, stage string, paths []string) (map[string]bodies, error) {
	if w.opts.Progress != nil {
		w.opts.Progress(stage, len(paths))
	}
	out := make(map[string]bodies, len(paths))
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(w.opts.Parallel)
	for _, p := range paths {
		g.Go(func() error {
			body, err := w.compare(gctx, p)
			if err != nil {
				return err
			}
			mu.Lock()
			out[p] = body
			mu.Unlock()
			return nil
		})
	}
	return out, g.Wait()
}
