package candidates

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/placement-syncd/placement-syncd/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/candidates/randworld"
	"github.com/placement-syncd/placement-syncd/placementsrv/readmodel"
)

// TestKeptAnchorsFollowPatches checks, on random worlds, that a renderer
// replaying kept anchors answers byte for byte as a fresh one does, for
// the same requests asked again after usage patches that fill, empty or
// nudge a few providers (sharing ones included).
func TestKeptAnchorsFollowPatches(t *testing.T) {
	rd := &Renderer{}
	replayed := int64(0)
	for seed := uint64(1); seed <= 400; seed++ {
		r := rand.New(rand.NewPCG(seed, 13))
		ws := randworld.NewWorld(r)
		if seed%4 != 0 {
			unshare(ws, int32(r.IntN(len(randworld.Classes))))
		}
		snap := randworld.Build(ws)
		var reqs []Request
		for i := range 4 {
			req := genRequest(r, ws)
			if i < 2 { // a flavor alone, as schedulers ask most
				req = Request{Groups: []Group{{Resources: genGroup(r, "", ws, false).Resources}}}
			}
			req.Limit = randworld.Pick(r, []int{0, 0, 1, 3})
			reqs = append(reqs, req)
		}
		for step := range 4 {
			for i := range reqs {
				got := renderedAnswer(t, rd, snap, &reqs[i])
				if want := renderedAnswer(t, &Renderer{}, snap, &reqs[i]); !bytes.Equal(got, want) {
					t.Fatalf("seed %d step %d request %d %+v: with kept anchors\n%s\nfresh\n%s", seed, step, i, reqs[i], got, want)
				}
			}
			snap = patchSome(r, snap)
		}
		replayed += rd.names(snap).kept.replayed.Load()
	}
	if replayed < 200 {
		t.Errorf("only %d anchors replayed: keeping was hardly exercised", replayed)
	}
}

// unshare takes class c off the sharing providers, so that requests for
// it have anchors of their own (anchorLocal).
func unshare(ws []randworld.Prov, c int32) {
	for i := range ws {
		if slices.Contains(ws[i].Traits, "MISC_SHARES_VIA_AGGREGATE") {
			ws[i].Invs = slices.DeleteFunc(ws[i].Invs, func(inv readmodel.SnapInventory) bool { return inv.Class == c })
		}
	}
}

// renderedAnswer streams req's answer on snap with rd; nil when req is an
// error or not streamed.
func renderedAnswer(t *testing.T, rd *Renderer, snap *readmodel.Snapshot, req *Request) []byte {
	t.Helper()
	q, err := Prepare(snap, *req, Options{NestedAware: true})
	if err != nil || !q.Streamable() {
		return nil
	}
	w := &bufWriter{}
	if err := rd.Answer(snap, q, req, microversion.Max, false).Stream(w); err != nil {
		t.Fatal(err)
	}
	return w.b
}

// patchSome changes the usage of one to three providers with inventories:
// full, empty, or one more than before.
func patchSome(r *rand.Rand, s *readmodel.Snapshot) *readmodel.Snapshot {
	var patches []readmodel.UsagePatch
	for range 1 + r.IntN(3) {
		p := int32(r.IntN(len(s.Providers)))
		st := s.State(p)
		if len(st.Inventories) == 0 || slices.ContainsFunc(patches, func(u readmodel.UsagePatch) bool { return u.Provider == p }) {
			continue
		}
		invs := slices.Clone(st.Inventories)
		k := r.IntN(len(invs))
		invs[k].Used = randworld.Pick(r, []int64{0, invs[k].Capacity, invs[k].Used + 1})
		patches = append(patches, readmodel.UsagePatch{Provider: p, Generation: st.Generation + 1, Inventories: invs})
	}
	next := s.Patched(s.Version+1, patches)
	if next == nil {
		panic("a usage patch was refused")
	}
	return next
}

// TestSharedRequestsNotKept checks that requests whose anchors depend on
// one another, because sharing providers alone can serve a group, are
// not kept: the anchor that keeps a sharing-only option, and the one
// that returns a sharing-only candidate first, depend on other anchors'
// usage.
func TestSharedRequestsNotKept(t *testing.T) {
	ws := []randworld.Prov{
		{UUID: "ss", Invs: []readmodel.SnapInventory{genInvFixed(2)}, Traits: []string{"MISC_SHARES_VIA_AGGREGATE"}, Aggs: []string{"agg0"}},
		{UUID: "cn1", Invs: []readmodel.SnapInventory{genInvFixed(0), genInvFixed(2)}, Aggs: []string{"agg0"}},
		{UUID: "cn2", Invs: []readmodel.SnapInventory{genInvFixed(0), genInvFixed(2)}, Aggs: []string{"agg0"}},
	}
	snap := randworld.Build(ws)
	disk := []Resource{{Class: "DISK_GB", Amount: 1}}
	for _, c := range []struct {
		req  Request
		kept bool
	}{
		{Request{Groups: []Group{{Resources: disk}}}, false},
		{Request{Groups: []Group{{Suffix: "_1", Resources: disk}}}, false},
		{Request{Groups: []Group{{Resources: append([]Resource{{Class: "VCPU", Amount: 1}}, disk...)}}}, true},
		{Request{Groups: []Group{{Resources: []Resource{{Class: "VCPU", Amount: 1}}}, {Suffix: "_1", Resources: disk}}}, true},
		{Request{Groups: []Group{{Resources: disk}, {Suffix: "_1", Resources: []Resource{{Class: "VCPU", Amount: 1}}}}}, false},
	} {
		rd := &Renderer{}
		renderedAnswer(t, rd, snap, &c.req)
		if kept := len(rd.names(snap).kept.shapes) > 0; kept != c.kept {
			t.Errorf("%+v: kept %v, want %v", c.req.Groups, kept, c.kept)
		}
	}
}

// genInvFixed is an inventory of class c (randworld.Classes index) with room.
func genInvFixed(c int32) readmodel.SnapInventory {
	return readmodel.SnapInventory{Class: c, Total: 100, MinUnit: 1, MaxUnit: 100, StepSize: 1, AllocationRatio: 1, Capacity: 100}
}

// TestLargeAnswersNotKept checks that an answer whose candidates outgrow
// one chunk (30,000 hosts, no limit) keeps nothing and is answered the same when
// asked again.
func TestLargeAnswersNotKept(t *testing.T) {
	snap := benchWorld(30000)
	req := Request{Groups: []Group{flavor}}
	rd := &Renderer{}
	first := renderedAnswer(t, rd, snap, &req)
	if n := bytes.Index(first, []byte(`"provider_summaries"`)); n <= streamChunk {
		t.Fatalf("the candidates are %d bytes, within one chunk", n)
	}
	if again := renderedAnswer(t, rd, snap, &req); !bytes.Equal(again, first) {
		t.Fatal("the answer changed when asked again")
	}
	kept := rd.names(snap).kept
	if len(kept.shapes) != 1 || kept.shapes[0].bytes.Load() != 0 || kept.replayed.Load() != 0 {
		t.Fatalf("%d shapes, %d bytes kept, %d anchors replayed", len(kept.shapes), kept.shapes[0].bytes.Load(), kept.replayed.Load())
	}
}

// TestShapeKeyNamesEveryField checks that requests differing in any one
// field have different shape keys, and that no field was added to Request
// or Group without a case here.
func TestShapeKeyNamesEveryField(t *testing.T) {
	base := func() Request {
		return Request{Groups: []Group{{Resources: []Resource{{"VCPU", 1}}}}}
	}
	edits := map[string]func(r *Request){
		"GroupPolicy":   func(r *Request) { r.GroupPolicy = PolicyIsolate },
		"Limit":         func(r *Request) { r.Limit = 3 },
		"RootRequired":  func(r *Request) { r.RootRequired = []string{"T0"} },
		"RootForbidden": func(r *Request) { r.RootForbidden = []string{"T0"} },
		"SameSubtree":   func(r *Request) { r.SameSubtree = [][]string{{"_1", "_2"}} },
		"Groups":        func(r *Request) { r.Groups = append(r.Groups, Group{Suffix: "_1"}) },
		"Suffix":        func(r *Request) { r.Groups[0].Suffix = "_1" },
		"Resources":     func(r *Request) { r.Groups[0].Resources[0].Amount = 2 },
		"Required":      func(r *Request) { r.Groups[0].Required = [][]string{{"T0"}} },
		"Forbidden":     func(r *Request) { r.Groups[0].Forbidden = []string{"T0"} },
		"MemberOf":      func(r *Request) { r.Groups[0].MemberOf = [][]string{{"agg0"}} },
		"ForbiddenAggs": func(r *Request) { r.Groups[0].ForbiddenAggs = []string{"agg0"} },
		"InTree":        func(r *Request) { r.Groups[0].InTree = "p0" },
	}
	if n := reflect.TypeFor[Request]().NumField() + reflect.TypeFor[Group]().NumField(); n != len(edits) {
		t.Fatalf("Request and Group have %d fields, the test edits %d", n, len(edits))
	}
	opt := Options{NestedAware: true}
	r0 := base()
	seen := map[string]string{shapeKey(&r0, microversion.Max, &opt): "base"}
	for name, edit := range edits {
		r := base()
		edit(&r)
		k := shapeKey(&r, microversion.Max, &opt)
		if other, dup := seen[k]; dup {
			t.Errorf("%s gives the key of %s: %s", name, other, k)
		}
		seen[k] = name
	}
	r := base()
	if shapeKey(&r, microversion.Max, &opt) == shapeKey(&r, microversion.Version{Major: 1, Minor: 29}, &opt) {
		t.Error("the microversion is not in the key")
	}
}

// TestKeptAnchorsConcurrent has goroutines answer with one renderer, each
// on snapshots patched from one another in its own order, so that kept
// anchors are stored, replaced and replayed at once (run with -race); every
// answer must be the one a fresh renderer gives on that snapshot.
func TestKeptAnchorsConcurrent(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 13))
	snaps := []*readmodel.Snapshot{benchWorld(200)}
	for range 5 {
		snaps = append(snaps, patchSome(r, snaps[len(snaps)-1]))
	}
	reqs := []Request{{Groups: []Group{flavor}, Limit: 50}, {Groups: []Group{flavor}}}
	want := make([][][]byte, len(snaps))
	for i, s := range snaps {
		for j := range reqs {
			want[i] = append(want[i], renderedAnswer(t, &Renderer{}, s, &reqs[j]))
		}
	}
	rd := &Renderer{}
	var wg sync.WaitGroup
	errs := make(chan string, 4)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range 60 {
				i, j := (n*(g+1))%len(snaps), n%len(reqs)
				if got := renderedAnswer(t, rd, snaps[i], &reqs[j]); !bytes.Equal(got, want[i][j]) {
					errs <- fmt.Sprintf("goroutine %d, snapshot %d, request %d: the answer differs from a fresh renderer's", g, i, j)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if rd.names(snaps[0]).kept.replayed.Load() == 0 {
		t.Error("no anchor was replayed")
	}
}
