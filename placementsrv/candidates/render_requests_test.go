package candidates

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/placement-syncd/placement-syncd/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/candidates/randworld"
	"github.com/placement-syncd/placement-syncd/placementsrv/readmodel"
)

// TestRenderedRequestsMatchCandidates renders streamed answers on the
// property test's random worlds, whose requests are served by one
// provider or several, and checks every allocation request's JSON against
// the candidate Find gives in its place: the copied parts of requests that
// one provider serves whole must name that provider and no other.
func TestRenderedRequestsMatchCandidates(t *testing.T) {
	rd := &Renderer{}
	rendered, single := 0, 0
	for seed := uint64(1); seed <= 600; seed++ {
		r := rand.New(rand.NewPCG(seed, 11))
		ws := randworld.NewWorld(r)
		snap := randworld.Build(ws)
		for q := range 4 {
			req := genRequest(r, ws)
			if q%2 == 0 && len(req.Groups) > 0 {
				req.Groups = req.Groups[:1]
			}
			want, err := Find(snap, req, Options{NestedAware: true})
			if err != nil {
				continue
			}
			qy, err := Prepare(snap, req, Options{NestedAware: true})
			if err != nil || !qy.Streamable() {
				continue
			}
			w := &bufWriter{}
			if err := rd.Answer(snap, qy, &req, microversion.Max, false).Stream(w); err != nil {
				t.Fatal(err)
			}
			var got struct {
				Requests []renderedRequest `json:"allocation_requests"`
			}
			if err := json.Unmarshal(w.b, &got); err != nil {
				t.Fatalf("seed %d req %d: %v\n%s", seed, q, err, w.b)
			}
			if len(got.Requests) != len(want.Candidates) {
				t.Fatalf("seed %d req %d: %d requests rendered, %d candidates", seed, q, len(got.Requests), len(want.Candidates))
			}
			for i, c := range want.Candidates {
				if exp := expectedRequest(snap, &req, c); !reflect.DeepEqual(got.Requests[i], exp) {
					t.Fatalf("seed %d req %d candidate %d:\n got %v\nwant %v", seed, q, i, got.Requests[i], exp)
				}
				rendered++
				if _, ok := singleProvider(&c); ok {
					single++
				}
			}
		}
	}
	if rendered < 1000 || single < 300 {
		t.Errorf("only %d requests rendered, %d of them served by one provider", rendered, single)
	}
}

type renderedRequest struct {
	Allocations map[string]struct {
		Resources map[string]int64 `json:"resources"`
	} `json:"allocations"`
	Mappings map[string][]string `json:"mappings"`
}

func expectedRequest(s *readmodel.Snapshot, req *Request, c Candidate) renderedRequest {
	var out renderedRequest
	out.Allocations = map[string]struct {
		Resources map[string]int64 `json:"resources"`
	}{}
	for _, a := range c.Allocs {
		u := s.Providers[a.Provider].UUID
		e := out.Allocations[u]
		if e.Resources == nil {
			e.Resources = map[string]int64{}
		}
		e.Resources[s.Classes[a.Class]] += a.Amount
		out.Allocations[u] = e
	}
	out.Mappings = map[string][]string{}
	for g, m := range c.Mappings {
		for _, p := range m {
			out.Mappings[req.Groups[g].Suffix] = append(out.Mappings[req.Groups[g].Suffix], s.Providers[p].UUID)
		}
	}
	return out
}

// bufWriter keeps a streamed answer.
type bufWriter struct{ b []byte }

func (w *bufWriter) Write(p []byte) (int, error) { w.b = append(w.b, p...); return len(p), nil }
func (w *bufWriter) Last(p []byte) error         { _, err := w.Write(p); return err }
