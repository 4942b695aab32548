package ledger

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

const (
	alConsumerA = "aaaaaaaa-0000-4000-8000-000000000001"
	alConsumerB = "bbbbbbbb-0000-4000-8000-000000000002"
	alChild     = "cccccccc-0000-4000-8000-000000000003"
)

// alDump renders the allocation-related state deterministically, so the
// in-memory state can be compared with what a reopen loads from storage.
func alDump(l *Ledger) string {
	var lines []string
	_ = l.read(func(st *state) error {
		for _, p := range st.providers {
			var usage []string
			for c, n := range p.usage {
				usage = append(usage, fmt.Sprintf("%s=%d", c.name, n))
			}
			sort.Strings(usage)
			var invs []string
			for c, inv := range p.inventories {
				invs = append(invs, fmt.Sprintf("%s:%d/%d", c.name, inv.Total, inv.Reserved))
				if _, ok := c.providers[p]; !ok {
					invs = append(invs, "MISSING-BACKLINK")
				}
			}
			sort.Strings(invs)
			lines = append(lines, fmt.Sprintf("rp %s gen=%d allocs=%d usage=%v inv=%v", p.uuid, p.generation, len(p.allocs), usage, invs))
		}
		for _, c := range st.consumers {
			var allocs []string
			for _, a := range c.allocs {
				allocs = append(allocs, fmt.Sprintf("%s/%s=%d", a.provider.uuid, a.class.name, a.used))
				if _, ok := a.provider.allocs[a]; !ok {
					allocs = append(allocs, "MISSING-BACKLINK")
				}
			}
			lines = append(lines, fmt.Sprintf("consumer %s %s/%s type=%q gen=%d %v", c.uuid, c.projectID, c.userID, c.consumerType, c.generation, allocs))
		}
		return nil
	})
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func alReq(consumer string, gen *int64, allocs ...store.Allocation) store.ConsumerAllocations {
	return store.ConsumerAllocations{ConsumerUUID: consumer, ProjectID: "p", UserID: "u", ConsumerType: "INSTANCE",
		CheckGeneration: true, Generation: gen, Allocations: allocs}
}

func alOn(rp, class string, used int64) store.Allocation {
	return store.Allocation{ProviderUUID: rp, ResourceClass: class, Used: used}
}

func alGen(n int64) *int64 { return &n }

func TestAllocationsMatchDiskAfterEachWrite(t *testing.T) {
	ctx := context.Background()
	db := newDB(t)
	s := openAt(t, db)
	t.Cleanup(func() { s.Close() })
	for _, rp := range []string{rpUUID, otherRPUUID} {
		if _, err := s.CreateProvider(ctx, store.NewProvider{UUID: rp, Name: rp}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.SetInventories(ctx, rp, 0, []store.Inventory{inv("VCPU", 8), inv("DISK_GB", 100)}); err != nil {
			t.Fatal(err)
		}
	}
	steps := []struct {
		name string
		run  func(s *Ledger) error
		want error
	}{
		{"two consumers", func(s *Ledger) error {
			return s.ReplaceAllocations(ctx, []store.ConsumerAllocations{
				alReq(alConsumerA, nil, alOn(rpUUID, "VCPU", 2), alOn(otherRPUUID, "DISK_GB", 10)),
				alReq(alConsumerB, nil, alOn(rpUUID, "VCPU", 6)),
			})
		}, nil},
		{"over capacity", func(s *Ledger) error {
			return s.ReplaceAllocations(ctx, []store.ConsumerAllocations{alReq(alConsumerA, alGen(1), alOn(rpUUID, "VCPU", 3))})
		}, store.ErrCapacityExceeded},
		{"swap within capacity", func(s *Ledger) error {
			return s.ReplaceAllocations(ctx, []store.ConsumerAllocations{
				alReq(alConsumerA, alGen(1), alOn(rpUUID, "VCPU", 6)),
				alReq(alConsumerB, alGen(1), alOn(rpUUID, "VCPU", 2)),
			})
		}, nil},
		{"empty new consumer is kept at generation 0", func(s *Ledger) error {
			return s.ReplaceAllocations(ctx, []store.ConsumerAllocations{alReq(alChild, nil)})
		}, nil},
		{"stale consumer generation", func(s *Ledger) error {
			return s.ReplaceAllocations(ctx, []store.ConsumerAllocations{alReq(alConsumerB, alGen(1))})
		}, store.ErrConsumerGeneration},
		{"emptied consumer is removed", func(s *Ledger) error {
			return s.ReplaceAllocations(ctx, []store.ConsumerAllocations{alReq(alConsumerB, alGen(2))})
		}, nil},
		{"reshape moves disk", func(s *Ledger) error {
			return s.Reshape(ctx, []store.ProviderInventories{
				{ProviderUUID: otherRPUUID, Generation: 2, Inventories: []store.Inventory{inv("VCPU", 8)}},
				{ProviderUUID: rpUUID, Generation: 4, Inventories: []store.Inventory{inv("VCPU", 8), inv("DISK_GB", 100)}},
			}, []store.ConsumerAllocations{alReq(alConsumerA, alGen(2), alOn(rpUUID, "VCPU", 6), alOn(rpUUID, "DISK_GB", 10))})
		}, nil},
		{"reshape dropping used inventory", func(s *Ledger) error {
			return s.Reshape(ctx, []store.ProviderInventories{
				{ProviderUUID: rpUUID, Generation: 7, Inventories: []store.Inventory{inv("VCPU", 8)}},
			}, nil)
		}, store.ErrInventoryInUse},
		{"delete", func(s *Ledger) error { return s.DeleteConsumerAllocations(ctx, alConsumerA) }, nil},
		{"delete again", func(s *Ledger) error { return s.DeleteConsumerAllocations(ctx, alConsumerA) }, store.ErrNotFound},
	}
	for _, step := range steps {
		before := alDump(s)
		err := step.run(s)
		if step.want == nil && err != nil || step.want != nil && !errors.Is(err, step.want) {
			t.Fatalf("%s: error %v, want %v", step.name, err, step.want)
		}
		mem := alDump(s)
		if step.want != nil && mem != before {
			t.Fatalf("%s: failed write changed state:\n%s\n---\n%s", step.name, before, mem)
		}
		if strings.Contains(mem, "MISSING-BACKLINK") {
			t.Fatalf("%s: inconsistent links:\n%s", step.name, mem)
		}
		s = reopen(t, s, db)
		if disk := alDump(s); disk != mem {
			t.Fatalf("%s: memory and storage differ:\nmemory:\n%s\nstorage:\n%s", step.name, mem, disk)
		}
	}
	want := strings.Join([]string{
		`consumer ` + alChild + ` p/u type="INSTANCE" gen=0 []`,
		`rp ` + otherRPUUID + ` gen=4 allocs=0 usage=[] inv=[VCPU:8/0]`,
		`rp ` + rpUUID + ` gen=7 allocs=0 usage=[] inv=[DISK_GB:100/0 VCPU:8/0]`,
	}, "\n")
	if got := alDump(s); got != want {
		t.Fatalf("final state:\n%s\nwant:\n%s", got, want)
	}
}
