package middleware

import (
	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/policy"
)

// BenchmarkAuthorize measures the per-request policy cost in the handler
// layer (the benchmarked endpoints authorize on every request).
func BenchmarkAuthorize(b *testing.B) {
	p, err := policy.New(policy.Options{})
	if err != nil {
		b.Fatal(err)
	}
	r := &Request{chain: New(Options{Policy: p}, nil)}
	r.Creds.Roles = []string{"admin"}
	r.Creds.UserID, r.Creds.ProjectID = policy.Str("admin"), policy.Str("admin")
	b.ReportAllocs()
	for b.Loop() {
		if err := r.Authorize(policy.CandidatesList); err != nil {
			b.Fatal(err)
		}
	}
}
