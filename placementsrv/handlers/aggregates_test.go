package handlers

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
	"github.com/placement-syncd/placement-syncd/placementsrv/schema"
)

const (
	agg1 = "f918801a-5e54-4bee-9095-09a9d0c786b8"
	agg2 = "a893eb5c-e2a0-4251-ab26-f71d3b0cfc0b"
)

// FuzzDecodeAggregates feeds arbitrary PUT aggregates bodies at every
// microversion to the decoder: no panic, a 400 for anything refused, and
// whatever is accepted is a list of distinct uuid strings with a
// generation exactly from 1.19.
func FuzzDecodeAggregates(f *testing.F) {
	for _, seed := range []struct {
		body  string
		minor int
	}{
		{`["` + agg1 + `", "` + agg2 + `"]`, 1},
		{`{"aggregates": ["` + agg1 + `"], "resource_provider_generation": 3}`, 19},
		{`{"aggregates": [], "resource_provider_generation": 3.0}`, 39},
		{`["` + agg1 + `", "` + agg1 + `"]`, 18},
		{`["` + strings.ToUpper(agg1) + `", "{` + agg2 + `}"]`, 5},
		{`["harry"]`, 1},
		{`{"aggregates": [1], "resource_provider_generation": 1e999}`, 30},
		{`{`, 19},
	} {
		f.Add([]byte(seed.body), seed.minor)
	}
	a := &API{schemas: schema.New()}
	f.Fuzz(func(t *testing.T, body []byte, minor int) {
		if minor < 1 || minor > 39 {
			minor = 1 + (minor%39+39)%39
		}
		got, err := a.decodeAggregates(fuzzRequest(body, minor))
		if err != nil {
			if he, ok := apierror.As(err); !ok || he.Status != http.StatusBadRequest {
				t.Fatalf("not a 400: %v", err)
			}
			return
		}
		if !json.Valid(body) {
			t.Fatalf("accepted invalid JSON %q", body)
		}
		if got.HasGeneration != (minor >= 19) {
			t.Fatalf("generation presence %v at 1.%d", got.HasGeneration, minor)
		}
		if got.Aggregates == nil {
			t.Fatalf("nil aggregates")
		}
		seen := map[string]bool{}
		for _, a := range got.Aggregates {
			if seen[a] || len([]rune(a)) < 32 {
				t.Fatalf("aggregate %q accepted (duplicate or short)", a)
			}
			seen[a] = true
		}
	})
}
