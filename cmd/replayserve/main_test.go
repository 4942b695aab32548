package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// origin is a fake upstream whose answer can be changed mid-test; it
// counts the requests it sees and echoes the microversion and any request
// body, so a test can tell a replayed answer from a fresh one.
type origin struct {
	mu     sync.Mutex
	hits   int
	answer string
	status int
}

func (o *origin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	o.mu.Lock()
	o.hits++
	hit, answer, status := o.hits, o.answer, o.status
	o.mu.Unlock()
	body, _ := io.ReadAll(r.Body)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Origin-Hit", strings.Repeat("i", hit))
	w.Header().Set("OpenStack-API-Version", r.Header.Get("OpenStack-API-Version"))
	w.WriteHeader(status)
	_, _ = io.WriteString(w, r.Method+" "+answer+" "+r.Header.Get("OpenStack-API-Version")+" "+string(body))
}

func (o *origin) set(answer string, status int) {
	o.mu.Lock()
	o.answer, o.status = answer, status
	o.mu.Unlock()
}

func (o *origin) count() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.hits
}

type reply struct {
	status int
	header http.Header
	body   string
}

func do(t *testing.T, method, url, version, body string) reply {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if version != "" {
		req.Header.Set("OpenStack-API-Version", version)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	h := resp.Header.Clone()
	h.Del("Date") // set by whichever server answered, never replayed
	return reply{status: resp.StatusCode, header: h, body: string(b)}
}

func sameReply(t *testing.T, what string, got, want reply) {
	t.Helper()
	if got.status != want.status || got.body != want.body {
		t.Fatalf("%s: got %d %q, want %d %q", what, got.status, got.body, want.status, want.body)
	}
	if len(got.header) != len(want.header) {
		t.Fatalf("%s: headers %v, want %v", what, got.header, want.header)
	}
	for k, v := range want.header {
		if strings.Join(got.header[k], "\x00") != strings.Join(v, "\x00") {
			t.Fatalf("%s: header %s = %q, want %q", what, k, got.header[k], v)
		}
	}
}

func newPair(t *testing.T) (*origin, string) {
	t.Helper()
	o := &origin{answer: "first", status: http.StatusOK}
	up := httptest.NewServer(o)
	t.Cleanup(up.Close)
	rp := &replayer{origin: up.URL, client: &http.Client{Timeout: 10 * time.Second}, answers: map[string]*answer{}}
	front := httptest.NewServer(rp)
	t.Cleanup(front.Close)
	return o, front.URL
}

func TestGETReplayedFromMemory(t *testing.T) {
	o, url := newPair(t)
	const v = "placement 1.20"
	first := do(t, http.MethodGet, url+"/resource_providers?name=cn1", v, "")
	if first.status != http.StatusOK || first.body != "GET first placement 1.20 " {
		t.Fatalf("first GET: %d %q", first.status, first.body)
	}
	if got := first.header.Get("X-Origin-Hit"); got != "i" {
		t.Fatalf("first GET X-Origin-Hit = %q, want the origin's first answer", got)
	}
	if o.count() != 1 {
		t.Fatalf("origin hits after first GET = %d, want 1", o.count())
	}

	o.set("second", http.StatusOK)
	for i := 0; i < 3; i++ {
		sameReply(t, "repeated GET", do(t, http.MethodGet, url+"/resource_providers?name=cn1", v, ""), first)
	}
	if o.count() != 1 {
		t.Fatalf("origin hits after repeated GETs = %d, want 1", o.count())
	}

	// A different URI (here only the query differs) is a different answer.
	other := do(t, http.MethodGet, url+"/resource_providers?name=cn2", v, "")
	if other.body != "GET second placement 1.20 " || o.count() != 2 {
		t.Fatalf("GET of another URI: %q after %d origin hits, want a fresh answer", other.body, o.count())
	}
}

func TestMicroversionsCachedSeparately(t *testing.T) {
	o, url := newPair(t)
	old := do(t, http.MethodGet, url+"/traits", "placement 1.6", "")
	o.set("newer", http.StatusOK)
	cur := do(t, http.MethodGet, url+"/traits", "placement 1.39", "")
	none := do(t, http.MethodGet, url+"/traits", "", "")
	if o.count() != 3 {
		t.Fatalf("origin hits = %d, want 3 (one per microversion header)", o.count())
	}
	if old.body != "GET first placement 1.6 " || cur.body != "GET newer placement 1.39 " || none.body != "GET newer  " {
		t.Fatalf("bodies %q, %q, %q", old.body, cur.body, none.body)
	}

	o.set("newest", http.StatusOK)
	sameReply(t, "1.6 again", do(t, http.MethodGet, url+"/traits", "placement 1.6", ""), old)
	sameReply(t, "1.39 again", do(t, http.MethodGet, url+"/traits", "placement 1.39", ""), cur)
	sameReply(t, "no version again", do(t, http.MethodGet, url+"/traits", "", ""), none)
	if o.count() != 3 {
		t.Fatalf("origin hits after replays = %d, want 3", o.count())
	}
}

func TestHEADReplayedWithoutBody(t *testing.T) {
	o, url := newPair(t)
	first := do(t, http.MethodHead, url+"/", "", "")
	o.set("changed", http.StatusOK)
	again := do(t, http.MethodHead, url+"/", "", "")
	if first.body != "" || again.body != "" {
		t.Fatalf("HEAD bodies %q, %q, want none", first.body, again.body)
	}
	sameReply(t, "repeated HEAD", again, first)
	if o.count() != 1 {
		t.Fatalf("origin hits = %d, want 1", o.count())
	}
}

func TestNonGETPassesThroughUncached(t *testing.T) {
	o, url := newPair(t)
	for i, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPost} {
		if i == 2 {
			o.set("later", http.StatusOK)
		}
		r := do(t, m, url+"/resource_providers", "placement 1.20", `{"name":"cn1"}`)
		want := "first"
		if i >= 2 {
			want = "later"
		}
		if wantBody := m + " " + want + ` placement 1.20 {"name":"cn1"}`; r.body != wantBody {
			t.Fatalf("%s #%d: body %q, want %q (request body forwarded, answer fresh)", m, i, r.body, wantBody)
		}
		if o.count() != i+1 {
			t.Fatalf("%s #%d: origin hits = %d, want %d", m, i, o.count(), i+1)
		}
	}
}

func TestOnlyOKAnswersCached(t *testing.T) {
	o, url := newPair(t)
	o.set("missing", http.StatusNotFound)
	if r := do(t, http.MethodGet, url+"/resource_providers/x", "", ""); r.status != http.StatusNotFound {
		t.Fatalf("status %d, want the origin's 404", r.status)
	}
	o.set("found", http.StatusOK)
	r := do(t, http.MethodGet, url+"/resource_providers/x", "", "")
	if r.status != http.StatusOK || r.body != "GET found  " || o.count() != 2 {
		t.Fatalf("after a 404: %d %q with %d origin hits, want the fresh 200", r.status, r.body, o.count())
	}
}

func TestOriginDownIsBadGateway(t *testing.T) {
	up := httptest.NewServer(http.NotFoundHandler())
	dead := up.URL
	up.Close()
	rp := &replayer{origin: dead, client: &http.Client{Timeout: 10 * time.Second}, answers: map[string]*answer{}}
	front := httptest.NewServer(rp)
	defer front.Close()
	if r := do(t, http.MethodGet, front.URL+"/", "", ""); r.status != http.StatusBadGateway {
		t.Fatalf("status %d, want 502", r.status)
	}
}
