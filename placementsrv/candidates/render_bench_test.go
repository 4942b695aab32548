package candidates

import (
	"fmt"
	"slices"
	"testing"

	"github.com/placement-syncd/placement-syncd/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/readmodel"
)

// BenchmarkCandidatesRenderWide measures engine plus JSON for the wide
// tree (one root, 8 one-device PCI children, 8 groups, no limit: 40320
// candidates), the largest answer the bench asks for.
func BenchmarkCandidatesRenderWide(b *testing.B) {
	sb := readmodel.NewSnapshotBuilder(1, 9)
	inv := func(class string, total int64) readmodel.SnapInventory {
		return readmodel.SnapInventory{Class: sb.Class(class), Total: total, MinUnit: 1, MaxUnit: total, StepSize: 1, AllocationRatio: 1, Capacity: total}
	}
	sb.AddProvider(readmodel.SnapProvider{UUID: "00000000-0000-4000-8000-000000000000"}, readmodel.ProviderState{Inventories: []readmodel.SnapInventory{inv("VCPU", 8), inv("MEMORY_MB", 4096), inv("DISK_GB", 500)}})
	for k := 1; k <= 8; k++ {
		sb.AddProvider(readmodel.SnapProvider{UUID: fmt.Sprintf("00000000-0000-4000-8000-%012d", k)}, readmodel.ProviderState{Inventories: []readmodel.SnapInventory{inv("CUSTOM_PCI_10DE_2330", 1)}})
	}
	snap := sb.Finish(func(i int) int32 {
		if i == 0 {
			return -1
		}
		return 0
	})
	req := Request{Groups: []Group{{Resources: []Resource{{Class: "DISK_GB", Amount: 20}, {Class: "MEMORY_MB", Amount: 2048}, {Class: "VCPU", Amount: 2}}}}, GroupPolicy: "none"}
	for g := 1; g <= 8; g++ {
		req.Groups = append(req.Groups, Group{Suffix: fmt.Sprint(g), Resources: []Resource{{Class: "CUSTOM_PCI_10DE_2330", Amount: 1}}})
	}
	b.Run("engine", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Find(snap, req, Options{NestedAware: true}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("engine+json", func(b *testing.B) {
		size := 0
		for b.Loop() {
			res, err := Find(snap, req, Options{NestedAware: true})
			if err != nil {
				b.Fatal(err)
			}
			body := appendCandidates(nil, nil, (&Renderer{}).names(snap), &req, &res, microversion.Max)
			size = len(body)
		}
		b.ReportMetric(float64(size)/1e6, "MB")
	})
	b.Run("engine+stream", func(b *testing.B) {
		// The handler's path: candidates rendered as the search finds
		// them, in streamChunk writes.
		n := 0
		names := (&Renderer{}).names(snap)
		buf := make([]byte, 0, streamChunk+8<<10)
		for b.Loop() {
			q, err := Prepare(snap, req, Options{NestedAware: true})
			if err != nil {
				b.Fatal(err)
			}
			cw := &countingWriter{}
			cj := newCandidateJSON(buf[:0], writerSink{cw}, names, &req, microversion.Max)
			rest, err := cj.finish(q.Stream(cj.add))
			if err != nil {
				b.Fatal(err)
			}
			n = cw.n + len(rest)
		}
		b.ReportMetric(float64(n)/1e6, "MB")
	})
}

// countingWriter discards what it is given, counting bytes.
type countingWriter struct{ n int }

func (c *countingWriter) Write(p []byte) (int, error) {
	c.n += len(p)
	return len(p), nil
}

// BenchmarkCandidatesSummaries measures rendering 1,000 roots' summaries
// at 1.39 (three classes, 19 traits each, as nova's libvirt driver
// reports): "first" is a snapshot's first answer, rendered afresh;
// "repeat" a later one, from the kept fragments.
func BenchmarkCandidatesSummaries(b *testing.B) {
	const n = 1000
	sb := readmodel.NewSnapshotBuilder(1, n)
	var traits []int32
	for k := 0; k < 19; k++ {
		traits = append(traits, sb.Trait(fmt.Sprintf("CUSTOM_HW_FEATURE_%02d", k)))
	}
	inv := func(class string, total, used int64) readmodel.SnapInventory {
		return readmodel.SnapInventory{Class: sb.Class(class), Total: total, MinUnit: 1, MaxUnit: total, StepSize: 1, AllocationRatio: 1, Capacity: total, Used: used}
	}
	sums := make([]int32, n)
	for i := range n {
		sums[i] = sb.AddProvider(readmodel.SnapProvider{UUID: fmt.Sprintf("00000000-0000-4000-8000-%012d", i), Traits: traits},
			readmodel.ProviderState{Inventories: []readmodel.SnapInventory{inv("VCPU", 512, int64(i%64)), inv("MEMORY_MB", 196608, 4096), inv("DISK_GB", 2000, 20)}})
	}
	snap := sb.Finish(func(int) int32 { return -1 })
	req := Request{Groups: []Group{{Resources: []Resource{{Class: "VCPU", Amount: 2}}}}}
	buf := make([]byte, 0, 1<<20)
	render := func(names *quotedNames) int {
		cj := newCandidateJSON(buf[:0], nil, names, &req, microversion.Max)
		b, _ := cj.finish(sums)
		return len(b)
	}
	b.Run("first", func(b *testing.B) {
		b.ReportAllocs()
		names := (&Renderer{}).names(snap)
		size := 0
		for b.Loop() {
			names.summaries = &summaryCache{}
			size = render(names)
		}
		b.ReportMetric(float64(size)/1e6, "MB")
	})
	b.Run("repeat", func(b *testing.B) {
		b.ReportAllocs()
		names := (&Renderer{}).names(snap)
		render(names)
		for b.Loop() {
			render(names)
		}
	})
}

// lastWriter is a Writer that discards the answer, counting bytes.
type lastWriter struct{ countingWriter }

func (w *lastWriter) Last(p []byte) error {
	_, err := w.Write(p)
	return err
}

// BenchmarkAnswerSimple is the handler's work for ../shared/bench's
// ac-simple/limit at 1.39 after parsing: prepare, search and render to a
// writer, the renderer (quoted names, summary fragments, buffers) and the
// owner cache kept between requests as the server keeps them.
func BenchmarkAnswerSimple(b *testing.B) {
	benchAnswer(b, benchWorld(1000), Request{Groups: []Group{flavor}, Limit: 1000})
}

// BenchmarkAnswerGranular is BenchmarkAnswerSimple for the bench's
// ac-granular-nested.
func BenchmarkAnswerGranular(b *testing.B) {
	benchAnswer(b, benchWorld(1000), granularNested())
}

// BenchmarkAnswerSimpleAfterClaim is BenchmarkAnswerSimple with a claim
// before each answer: a usage patch on one root, another each time, so
// that the answer searches that anchor again and copies the others.
func BenchmarkAnswerSimpleAfterClaim(b *testing.B) {
	s := benchWorld(1000)
	i := 0
	benchAnswerEach(b, func(*Renderer) (*readmodel.Snapshot, Request) {
		r := s.Roots[i%len(s.Roots)]
		for i++; len(s.State(r).Inventories) == 0; i++ {
			r = s.Roots[i%len(s.Roots)]
		}
		invs := slices.Clone(s.State(r).Inventories)
		invs[0].Used ^= 1
		s = s.Patched(s.Version+1, []readmodel.UsagePatch{{Provider: r, Generation: s.State(r).Generation + 1, Inventories: invs}})
		return s, Request{Groups: []Group{flavor}, Limit: 1000}
	})
}

// BenchmarkAnswerSimpleNewShape is BenchmarkAnswerSimple with nothing
// kept from before each answer: the first request of its shape, which
// searches and renders every anchor and keeps them.
func BenchmarkAnswerSimpleNewShape(b *testing.B) {
	s := benchWorld(1000)
	req := Request{Groups: []Group{flavor}, Limit: 1000}
	benchAnswerEach(b, func(rd *Renderer) (*readmodel.Snapshot, Request) {
		rd.names(s).kept = &anchorKeeper{}
		return s, req
	})
}

func benchAnswer(b *testing.B, s *readmodel.Snapshot, req Request) {
	benchAnswerEach(b, func(*Renderer) (*readmodel.Snapshot, Request) { return s, req })
}

// benchAnswerEach answers next's request on next's snapshot per op, with
// one renderer.
func benchAnswerEach(b *testing.B, next func(*Renderer) (*readmodel.Snapshot, Request)) {
	rd := &Renderer{}
	opts := Options{NestedAware: true, Owners: &OwnerCache{}}
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		s, req := next(rd)
		q, err := Prepare(s, req, opts)
		if err != nil {
			b.Fatal(err)
		}
		w := &lastWriter{}
		if err := rd.Answer(s, q, &req, microversion.Max, false).Stream(w); err != nil {
			b.Fatal(err)
		}
		n = w.n
	}
	b.ReportMetric(float64(n)/1e6, "MB")
}
