package candidates

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/readmodel"
)

// benchWorld lays out n compute roots like ../shared/bench's dataset:
// racks of 20 sharing an aggregate, every 10th rack keeping its disk on a
// sharing provider, every 10th compute a NUMA host (two NUMA children and
// a NIC), about 30% of memory and disk in use.
func benchWorld(n int) *readmodel.Snapshot {
	r := rand.New(rand.NewPCG(uint64(n), 1))
	b := readmodel.NewSnapshotBuilder(1, n*13/10)
	for _, c := range []string{"VCPU", "MEMORY_MB", "DISK_GB", "NET_BW_EGR_KILOBIT_PER_SEC", "CUSTOM_PCI_10DE_2330"} {
		b.Class(c)
	}
	inv := func(class string, total, reserved int64, ratio float64, used int64) readmodel.SnapInventory {
		return readmodel.SnapInventory{Class: b.Class(class), Total: total, Reserved: reserved, MinUnit: 1, MaxUnit: total,
			StepSize: 1, AllocationRatio: ratio, Used: used, Capacity: int64(float64(total-reserved) * ratio)}
	}
	base := []string{"COMPUTE_NODE", "HW_CPU_X86_SSE41", "HW_CPU_X86_SSE42", "HW_CPU_X86_AVX", "HW_CPU_X86_AESNI"}
	var parents, uuids []string
	add := func(p readmodel.SnapProvider, invs []readmodel.SnapInventory, parent string) {
		b.AddProvider(p, readmodel.ProviderState{Inventories: invs})
		parents = append(parents, parent)
		uuids = append(uuids, p.UUID)
	}
	racks := (n + 19) / 20
	for rk := 0; rk < racks; rk++ {
		if rk%10 == 5%min(racks, 10) {
			add(readmodel.SnapProvider{UUID: fmt.Sprintf("ss-%d", rk),
				Traits:     []int32{b.Trait("MISC_SHARES_VIA_AGGREGATE")},
				Aggregates: []int32{b.Aggregate(fmt.Sprintf("rack-%d", rk))}},
				[]readmodel.SnapInventory{inv("DISK_GB", 40000, 0, 1, int64(r.IntN(12000)))}, "")
		}
	}
	for i := 0; i < n; i++ {
		rk := i / 20
		uuid := fmt.Sprintf("cn-%d", i)
		root := readmodel.SnapProvider{UUID: uuid, Aggregates: []int32{b.Aggregate(fmt.Sprintf("rack-%d", rk))}}
		var rootInv []readmodel.SnapInventory
		for _, t := range base {
			root.Traits = append(root.Traits, b.Trait(t))
		}
		root.Traits = append(root.Traits, b.Trait(fmt.Sprintf("CUSTOM_RACK_%d", rk)))
		if i%2 == 0 {
			root.Traits = append(root.Traits, b.Trait("HW_CPU_X86_AVX2"))
		}
		if i%50 == 10 {
			root.Traits = append(root.Traits, b.Trait("COMPUTE_STATUS_DISABLED"))
		}
		if rk%10 != 5%min(racks, 10) {
			rootInv = append(rootInv, inv("DISK_GB", 2000, 0, 1, int64(r.IntN(600))))
		}
		nested := i%10 == 4
		if !nested {
			rootInv = append(rootInv, inv("VCPU", 32, 0, 16, int64(r.IntN(100))),
				inv("MEMORY_MB", 131072, 512, 1.5, int64(r.IntN(58000))))
		}
		add(root, rootInv, "")
		if nested {
			for k := 0; k < 2; k++ {
				add(readmodel.SnapProvider{UUID: fmt.Sprintf("%s-numa%d", uuid, k), Traits: []int32{b.Trait("HW_NUMA_ROOT")}},
					[]readmodel.SnapInventory{inv("VCPU", 16, 0, 16, int64(r.IntN(50))), inv("MEMORY_MB", 65536, 256, 1.5, int64(r.IntN(29000)))}, uuid)
			}
			add(readmodel.SnapProvider{UUID: uuid + "-nic0", Traits: []int32{b.Trait(fmt.Sprintf("CUSTOM_PHYSNET_%c", 'A'+i%3)), b.Trait("CUSTOM_VNIC_TYPE_DIRECT")}},
				[]readmodel.SnapInventory{inv("NET_BW_EGR_KILOBIT_PER_SEC", 10000000, 0, 1, 1000000)}, uuid)
		}
	}
	idx := map[string]int32{}
	for i, u := range uuids {
		idx[u] = int32(i)
	}
	return b.Finish(func(i int) int32 {
		if parents[i] == "" {
			return -1
		}
		return idx[parents[i]]
	})
}

// wideWorld is one root with `kids` PCI children of one device each.
func wideWorld(kids int) *readmodel.Snapshot {
	b := readmodel.NewSnapshotBuilder(1, kids+1)
	inv := func(class string, total int64) readmodel.SnapInventory {
		return readmodel.SnapInventory{Class: b.Class(class), Total: total, MinUnit: 1, MaxUnit: total, StepSize: 1, AllocationRatio: 1, Capacity: total}
	}
	parents := []int32{-1}
	b.AddProvider(readmodel.SnapProvider{UUID: "wide"}, readmodel.ProviderState{Inventories: []readmodel.SnapInventory{inv("VCPU", 8), inv("MEMORY_MB", 4096), inv("DISK_GB", 500)}})
	for k := 0; k < kids; k++ {
		b.AddProvider(readmodel.SnapProvider{UUID: fmt.Sprintf("pci%d", k)}, readmodel.ProviderState{Inventories: []readmodel.SnapInventory{inv("CUSTOM_PCI_10DE_2330", 1)}})
		parents = append(parents, 0)
	}
	return b.Finish(func(i int) int32 { return parents[i] })
}

var flavor = Group{Resources: []Resource{{"VCPU", 2}, {"MEMORY_MB", 4096}, {"DISK_GB", 20}}}

func wideRequest(groups, limit int) Request {
	req := Request{Groups: []Group{{Resources: []Resource{{"DISK_GB", 20}, {"MEMORY_MB", 2048}, {"VCPU", 2}}}},
		GroupPolicy: PolicyNone, Limit: limit}
	for g := 1; g <= groups; g++ {
		req.Groups = append(req.Groups, Group{Suffix: fmt.Sprint(g), Resources: []Resource{{"CUSTOM_PCI_10DE_2330", 1}}})
	}
	return req
}

func benchFind(b *testing.B, s *readmodel.Snapshot, req Request, opt Options) {
	b.Helper()
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		res, err := Find(s, req, opt)
		if err != nil {
			b.Fatal(err)
		}
		n = len(res.Candidates)
	}
	b.ReportMetric(float64(n), "cands")
}

// benchStream measures the streaming path the HTTP handler takes, with a
// sink that only counts.
func benchStream(b *testing.B, s *readmodel.Snapshot, req Request, opt Options) {
	b.Helper()
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		q, err := Prepare(s, req, opt)
		if err != nil {
			b.Fatal(err)
		}
		if !q.Streamable() {
			b.Fatal("not streamable")
		}
		n = 0
		q.Stream(func(*Candidate) bool { n++; return true })
	}
	b.ReportMetric(float64(n), "cands")
}

func BenchmarkFind(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		s := benchWorld(n)
		nested := Options{NestedAware: true}
		b.Run(fmt.Sprintf("simple-nolimit/%d", n), func(b *testing.B) {
			benchFind(b, s, Request{Groups: []Group{flavor}}, nested)
		})
		b.Run(fmt.Sprintf("simple-nolimit-stream/%d", n), func(b *testing.B) {
			benchStream(b, s, Request{Groups: []Group{flavor}}, nested)
		})
		b.Run(fmt.Sprintf("simple-limit1000/%d", n), func(b *testing.B) {
			benchFind(b, s, Request{Groups: []Group{flavor}, Limit: 1000}, nested)
		})
		b.Run(fmt.Sprintf("simple-limit1000-random/%d", n), func(b *testing.B) {
			benchFind(b, s, Request{Groups: []Group{flavor}, Limit: 1000}, Options{NestedAware: true, Randomize: true})
		})
		b.Run(fmt.Sprintf("traits/%d", n), func(b *testing.B) {
			g := flavor
			g.Required = [][]string{{"HW_CPU_X86_AVX2"}}
			g.Forbidden = []string{"COMPUTE_STATUS_DISABLED"}
			g.MemberOf = [][]string{{"rack-0", "rack-2", "rack-4", "rack-6", "rack-8"}}
			benchFind(b, s, Request{Groups: []Group{g}, Limit: 1000}, nested)
		})
		// The unsuffixed group and group 1 share VCPU without
		// group_policy=none: every anchor replays Placement's in-place
		// folding (inflate.go).
		folded := Request{Groups: []Group{flavor, {Suffix: "1", Resources: []Resource{{"VCPU", 2}}}}}
		b.Run(fmt.Sprintf("folded-nolimit/%d", n), func(b *testing.B) {
			benchFind(b, s, folded, nested)
		})
		b.Run(fmt.Sprintf("folded-limit1000/%d", n), func(b *testing.B) {
			req := folded
			req.Limit = 1000
			benchFind(b, s, req, nested)
		})
		b.Run(fmt.Sprintf("granular-nested/%d", n), func(b *testing.B) {
			benchFind(b, s, granularNested(), nested)
		})
	}
}

// granularNested is ../shared/bench's ac-granular-nested request.
func granularNested() Request {
	numa := func(s string) Group {
		return Group{Suffix: s, Resources: []Resource{{"VCPU", 2}, {"MEMORY_MB", 4096}}, Required: [][]string{{"HW_NUMA_ROOT"}}}
	}
	return Request{Groups: []Group{
		{Resources: []Resource{{"DISK_GB", 20}}},
		numa("1"), numa("2"),
		{Suffix: "3", Resources: []Resource{{"NET_BW_EGR_KILOBIT_PER_SEC", 1000}}, Required: [][]string{{"CUSTOM_PHYSNET_A"}}},
		{Suffix: "4", Required: [][]string{{"COMPUTE_NODE"}}},
	}, SameSubtree: [][]string{{"1", "2", "3", "4"}}, GroupPolicy: PolicyIsolate,
		RootRequired: []string{"HW_CPU_X86_AVX2"}, RootForbidden: []string{"COMPUTE_STATUS_DISABLED"}, Limit: 1000}
}

func BenchmarkFindWide(b *testing.B) {
	s := wideWorld(8)
	for _, groups := range []int{5, 8} {
		for _, limit := range []int{0, 1000} {
			for _, order := range []Order{DepthFirst, BreadthFirst} {
				b.Run(fmt.Sprintf("groups=%d/limit=%d/order=%d", groups, limit, order), func(b *testing.B) {
					benchFind(b, s, wideRequest(groups, limit), Options{NestedAware: true, Order: order})
				})
				if order == DepthFirst {
					b.Run(fmt.Sprintf("groups=%d/limit=%d/stream", groups, limit), func(b *testing.B) {
						benchStream(b, s, wideRequest(groups, limit), Options{NestedAware: true})
					})
				}
			}
		}
	}
	// Nine groups cannot fit eight devices: the search must fail fast
	// instead of trying 8!-many partial assignments.
	b.Run("groups=9/infeasible", func(b *testing.B) {
		benchFind(b, s, wideRequest(9, 0), Options{NestedAware: true})
	})
}
