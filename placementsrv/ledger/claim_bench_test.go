package ledger

import (
	"context"
	"fmt"
	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
	"github.com/placement-syncd/placement-syncd/placementsrv/store/mysql"
	"github.com/placement-syncd/placement-syncd/testkit/mariadbtest"
)

// BenchmarkClaim is the hot write path end to end, over SQLite: one
// consumer's allocations on one of 1,000 providers written (validate, SQL,
// COMMIT, apply), then, with snapshot, the read model the next candidates
// request needs (patched after an allocation-only write).
func BenchmarkClaim(b *testing.B) {
	benchClaim(b, func(b *testing.B) *Ledger { return openAt(b, newDB(b)) })
}

// BenchmarkClaimMySQL is BenchmarkClaim over a real MariaDB on loopback.
func BenchmarkClaimMySQL(b *testing.B) {
	s := mariadbtest.Start(b)
	benchClaim(b, func(b *testing.B) *Ledger {
		be, err := mysql.Open(context.Background(), s.Config(s.NewDatabase(b)), mysql.Options{Migrate: true})
		if err != nil {
			b.Fatal(err)
		}
		l, err := New(context.Background(), be, Options{})
		if err != nil {
			be.Close()
			b.Fatal(err)
		}
		return l
	})
}

func benchClaim(b *testing.B, open func(b *testing.B) *Ledger) {
	for _, snapshot := range []bool{false, true} {
		b.Run(fmt.Sprint("snapshot=", snapshot), func(b *testing.B) {
			ctx := context.Background()
			st := open(b)
			defer st.Close()
			const n = 1000
			for i := range n {
				u := fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
				if _, err := st.CreateProvider(ctx, store.NewProvider{UUID: u, Name: u}); err != nil {
					b.Fatal(err)
				}
				invs := []store.Inventory{
					{ResourceClass: "VCPU", InventoryAmounts: store.InventoryAmounts{Total: 1 << 30, MinUnit: 1, MaxUnit: 1 << 30, StepSize: 1, AllocationRatio: 1}},
					{ResourceClass: "MEMORY_MB", InventoryAmounts: store.InventoryAmounts{Total: 1 << 40, MinUnit: 1, MaxUnit: 1 << 40, StepSize: 1, AllocationRatio: 1}},
				}
				if _, _, err := st.SetInventories(ctx, u, 0, invs); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := st.Snapshot(ctx); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				rp := fmt.Sprintf("00000000-0000-4000-8000-%012d", i%n)
				req := store.ConsumerAllocations{
					ConsumerUUID: fmt.Sprintf("cccccccc-0000-4000-8000-%012d", i), ProjectID: "p", UserID: "u",
					Allocations: []store.Allocation{
						{ProviderUUID: rp, ResourceClass: "VCPU", Used: 2},
						{ProviderUUID: rp, ResourceClass: "MEMORY_MB", Used: 2048},
					},
				}
				if err := st.ReplaceAllocations(ctx, []store.ConsumerAllocations{req}); err != nil {
					b.Fatal(err)
				}
				if snapshot {
					if _, err := st.Snapshot(ctx); err != nil {
						b.Fatal(err)
					}
				}
				i++
			}
		})
	}
}
