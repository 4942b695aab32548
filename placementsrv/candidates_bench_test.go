package placementsrv

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// BenchmarkCandidatesHTTPWide is the wide tree over HTTP, the client
// reading the whole body, as ../shared/bench's ac-wide/nolimit.
func BenchmarkCandidatesHTTPWide(b *testing.B) {
	ts := startTestServer(b)
	ctx := context.Background()
	st := ts.Store
	const root = "44444444-4444-4444-8444-444444444444"
	if _, err := st.CreateProvider(ctx, store.NewProvider{UUID: root, Name: "wide"}); err != nil {
		b.Fatal(err)
	}
	rootInv := []store.Inventory{
		{ResourceClass: "DISK_GB", InventoryAmounts: store.InventoryAmounts{Total: 500, MinUnit: 1, MaxUnit: 500, StepSize: 1, AllocationRatio: 1}},
		{ResourceClass: "MEMORY_MB", InventoryAmounts: store.InventoryAmounts{Total: 4096, MinUnit: 1, MaxUnit: 4096, StepSize: 1, AllocationRatio: 1}},
		{ResourceClass: "VCPU", InventoryAmounts: store.InventoryAmounts{Total: 8, MinUnit: 1, MaxUnit: 8, StepSize: 1, AllocationRatio: 1}},
	}
	if _, _, err := st.SetInventories(ctx, root, 0, rootInv); err != nil {
		b.Fatal(err)
	}
	if _, _, err := st.EnsureResourceClass(ctx, "CUSTOM_PCI_10DE_2330"); err != nil {
		b.Fatal(err)
	}
	query := "resources=DISK_GB:20,MEMORY_MB:2048,VCPU:2&group_policy=none"
	for i := 1; i <= 8; i++ {
		u := fmt.Sprintf("55555555-5555-4555-8555-%012d", i)
		if _, err := st.CreateProvider(ctx, store.NewProvider{UUID: u, Name: fmt.Sprint("pci", i), ParentUUID: root}); err != nil {
			b.Fatal(err)
		}
		inv := store.Inventory{ResourceClass: "CUSTOM_PCI_10DE_2330", InventoryAmounts: store.InventoryAmounts{Total: 1, MinUnit: 1, MaxUnit: 1, StepSize: 1, AllocationRatio: 1}}
		if _, _, err := st.SetInventories(ctx, u, 0, []store.Inventory{inv}); err != nil {
			b.Fatal(err)
		}
		query += fmt.Sprintf("&resources%d=CUSTOM_PCI_10DE_2330:1", i)
	}
	c := call{Method: "GET", Path: "/allocation_candidates?" + query, Version: "1.39"}
	size := 0
	for b.Loop() {
		size = len(ts.must(b, http.StatusOK, c).Body)
	}
	b.ReportMetric(float64(size)/1e6, "MB")
}
