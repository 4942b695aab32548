package ledger

import (
	"context"
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// BenchmarkListProviders lists 2000 providers with and without filters.
func BenchmarkListProviders(b *testing.B) {
	ctx := context.Background()
	s := openAt(b, newDB(b))
	defer s.Close()
	for i := 0; i < 2000; i++ {
		u := "00000000-0000-4000-8000-" + strings.Repeat("0", 8) + string(rune('a'+i/676%26)) + string(rune('a'+i/26%26)) + string(rune('a'+i%26)) + "0"
		u = u[:36]
		if _, err := s.CreateProvider(ctx, store.NewProvider{UUID: u, Name: u}); err != nil {
			b.Fatal(err)
		}
	}
	for _, bc := range []struct {
		name string
		f    store.ProviderFilter
	}{
		{"all", store.ProviderFilter{}},
		{"resources", store.ProviderFilter{Resources: []store.ResourceAmount{{Class: "VCPU", Amount: 1}}}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := s.ListProviders(ctx, bc.f); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
