package difftest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Mismatch is one request whose answers differ.
type Mismatch struct {
	Seed   uint64 // 0 for a replayed trace
	Op     int    // replay the sequence up to this request
	Step   int
	Gen    string
	Method string
	Path   string // as the reference saw it, generated uuids as @genN@
	MV     any
	Note   string
	Body   string
	Ref    Answer
	Ours   Answer
	Diffs  []Diff
	// Diverged is the first earlier write that one server carried out
	// and the other refused (0: none): from there on their states may
	// differ, and a mismatch may be its consequence.
	Diverged int
}

// Stats counts what a run sent and found.
type Stats struct {
	Requests   int
	Mismatched int
	Bad        int            // deliberately wrong requests
	Ref5xx     int            // 5xx answers of the reference
	Ours5xx    int            // 5xx answers of ours
	BadRef5xx  int            // deliberately wrong requests the reference answered with a 5xx
	BadOurs5xx int            // deliberately wrong requests ours answered with a 5xx
	Routes     map[string]int // "METHOD /template" -> requests
	Minors     map[int]int    // minor microversion sent -> requests
	// Deliberate counts the documented differences (see Deliberate) by
	// name; they are not mismatches.
	Deliberate map[string]int
}

// Runner sends every request to both servers, maps the uuids they
// generate, compares the answers and keeps the trace.
type Runner struct {
	RefURL, OursURL string
	Seed            uint64
	Trace           *TraceWriter // nil: no trace
	Stats           Stats
	Mismatches      []Mismatch
	// RefCrashes are the requests the reference alone answered with a
	// 5xx: its bugs, counted apart from mismatches but listed.
	RefCrashes []Mismatch

	hc        *http.Client
	op        int
	genRef    []string // uuids the reference generated, in order (@gen1@ first)
	genOurs   []string // ours, in the same order ("" when ours failed)
	unlimited map[string]*Answer
	diverged  int
}

// NewRunner makes a runner for two servers' base URLs.
func NewRunner(refURL, oursURL string, seed uint64) *Runner {
	return &Runner{RefURL: strings.TrimRight(refURL, "/"), OursURL: strings.TrimRight(oursURL, "/"), Seed: seed,
		// uWSGI's http-socket closes each connection after one answer.
		hc:        &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{DisableKeepAlives: true}},
		unlimited: map[string]*Answer{},
		Stats:     Stats{Routes: map[string]int{}, Minors: map[int]int{}, Deliberate: map[string]int{}}}
}

// Run sends the generator's requests for steps steps.
func (rn *Runner) Run(g *Generator, steps int) error {
	for {
		r, step := g.Next()
		if step > steps {
			return nil
		}
		ref, err := rn.Do(r, step)
		if err != nil {
			return err
		}
		g.Observe(r, ref)
	}
}

// Replay sends a trace's requests up to op upto (0: all).
func (rn *Runner) Replay(recs []Record, upto int) error {
	for i := range recs {
		if upto > 0 && recs[i].Op > upto {
			break
		}
		if _, err := rn.Do(FromRecord(&recs[i]), recs[i].Step); err != nil {
			return err
		}
	}
	return nil
}

// Do sends one request to both servers and compares their answers; it
// returns the reference's.
func (rn *Runner) Do(r *Request, step int) (*Answer, error) {
	rn.op++
	refPath, refBody := rn.forRef(r.Path), rn.forRef(r.Body)
	oursPath, oursBody := rn.forOurs(r.Path), rn.forOurs(r.Body)
	var ref, ours *Answer
	var refErr, oursErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		ours, oursErr = rn.send(rn.OursURL, r, oursPath, oursBody)
	}()
	ref, refErr = rn.send(rn.RefURL, r, refPath, refBody)
	<-done
	if refErr != nil {
		return nil, fmt.Errorf("op %d: reference: %w", rn.op, refErr)
	}
	if oursErr != nil {
		return nil, fmt.Errorf("op %d: ours: %w", rn.op, oursErr)
	}
	rn.learnGenerated(r, ref, ours)
	rn.toRef(ours)
	var unlimited *Answer
	if strings.HasPrefix(refPath, "/allocation_candidates") && r.Method == "GET" {
		if hasLimit(refPath) {
			unlimited = rn.unlimited[withoutLimit(refPath)]
		} else if ref.Status == 200 {
			rn.unlimited[refPath] = ref
		}
	} else if r.Method != "GET" {
		clear(rn.unlimited)
	}
	diffs := Compare(refPath, ref, ours, unlimited)
	why := Deliberate(r.Method, refPath, ref, ours, diffs)
	if why != "" {
		rn.Stats.Deliberate[why]++
		diffs = nil
	}
	rn.count(r, refPath, ref, ours, len(diffs) > 0)
	rec := toRecord(rn.op, step, r, rn.traced(refPath), rn.traced(refBody))
	rec.Ref, rec.Cand, rec.RefBody = ref.Status, ours.Status, string(ref.Body)
	for _, d := range diffs {
		rec.Mismatch = append(rec.Mismatch, d.Class())
	}
	m := Mismatch{Seed: rn.Seed, Op: rn.op, Step: step, Gen: r.Gen, Method: r.Method, Path: rec.Path, MV: rec.MV,
		Note: r.Note, Body: rec.Body, Ref: *ref, Ours: *ours, Diffs: diffs, Diverged: rn.diverged}
	switch {
	case len(diffs) > 0:
		rn.Mismatches = append(rn.Mismatches, m)
	case why == refCrash:
		rn.RefCrashes = append(rn.RefCrashes, m)
	}
	if rn.diverged == 0 && r.Method != "GET" && r.Method != "HEAD" && (ref.Status/100 == 2) != (ours.Status/100 == 2) {
		rn.diverged = rn.op
	}
	if rn.Trace != nil {
		if err := rn.Trace.Write(rec); err != nil {
			return nil, err
		}
	}
	return ref, nil
}

func (rn *Runner) count(r *Request, refPath string, ref, ours *Answer, mismatched bool) {
	s := &rn.Stats
	s.Requests++
	s.Routes[r.Method+" "+RouteTemplate(refPath)]++
	if r.MV >= 0 {
		s.Minors[r.MV]++
	}
	if mismatched {
		s.Mismatched++
	}
	if ref.Status >= 500 {
		s.Ref5xx++
	}
	if ours.Status >= 500 {
		s.Ours5xx++
	}
	if r.Bad {
		s.Bad++
		if ref.Status >= 500 {
			s.BadRef5xx++
		}
		if ours.Status >= 500 {
			s.BadOurs5xx++
		}
	}
}

func (rn *Runner) send(base string, r *Request, path, body string) (*Answer, error) {
	req, err := r.httpRequest(base, path, body)
	if err != nil {
		return nil, err
	}
	resp, err := rn.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", r.Method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("read %s %s: %w", r.Method, path, err)
	}
	return &Answer{Status: resp.StatusCode, Header: resp.Header, Body: b}, nil
}

// placeholder is how a trace names the i-th generated uuid (from 0).
func placeholder(i int) string { return fmt.Sprintf("@gen%d@", i+1) }

func (rn *Runner) forRef(s string) string {
	for i, u := range rn.genRef {
		s = strings.ReplaceAll(s, placeholder(i), u)
	}
	return s
}

// forOurs writes the text for ours: placeholders and the reference's
// generated uuids become ours.
func (rn *Runner) forOurs(s string) string {
	for i, u := range rn.genOurs {
		if u == "" {
			continue
		}
		s = strings.ReplaceAll(s, placeholder(i), u)
		s = strings.ReplaceAll(s, rn.genRef[i], u)
	}
	return s
}

// traced writes the reference's generated uuids as placeholders.
func (rn *Runner) traced(s string) string {
	for i, u := range rn.genRef {
		s = strings.ReplaceAll(s, u, placeholder(i))
	}
	return s
}

// toRef maps ours' generated uuids in an answer to the reference's.
func (rn *Runner) toRef(a *Answer) {
	body := string(a.Body)
	loc := a.Header.Get("Location")
	for i, u := range rn.genOurs {
		if u == "" {
			continue
		}
		body = strings.ReplaceAll(body, u, rn.genRef[i])
		loc = strings.ReplaceAll(loc, u, rn.genRef[i])
	}
	a.Body = []byte(body)
	if loc != "" {
		a.Header.Set("Location", loc)
	}
}

// learnGenerated records the uuids both servers chose for a provider
// created without one.
func (rn *Runner) learnGenerated(r *Request, ref, ours *Answer) {
	if r.Method != "POST" || strings.SplitN(r.Path, "?", 2)[0] != "/resource_providers" || ref.Status/100 != 2 {
		return
	}
	var body map[string]any
	if json.Unmarshal([]byte(r.Body), &body) != nil {
		return
	}
	if _, ok := body["uuid"]; ok {
		return
	}
	refU := createdUUID(ref)
	if refU == "" {
		return
	}
	oursU := ""
	if ours.Status/100 == 2 {
		oursU = createdUUID(ours)
	}
	rn.genRef = append(rn.genRef, refU)
	rn.genOurs = append(rn.genOurs, oursU)
}

func createdUUID(a *Answer) string {
	if u := uuidFromLocation(a.Header.Get("Location")); u != "" {
		return u
	}
	var b struct {
		UUID string `json:"uuid"`
	}
	_ = json.Unmarshal(a.Body, &b)
	return b.UUID
}

// RouteTemplate generalizes a path: uuids and names become {uuid} and
// {name}, the query string is dropped.
func RouteTemplate(path string) string {
	p, _, _ := strings.Cut(path, "?")
	segs := strings.Split(p, "/")
	for i := 1; i < len(segs); i++ {
		switch segs[i-1] {
		case "resource_providers", "allocations":
			segs[i] = "{uuid}"
		case "resource_classes", "traits", "inventories":
			segs[i] = "{name}"
		}
	}
	return strings.Join(segs, "/")
}
