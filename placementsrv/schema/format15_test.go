package schema

import (
	"strings"
	"testing"

	mv "github.com/placement-syncd/placement-syncd/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/release"
)

func TestProviderListQueryOfRelease(t *testing.T) {
	set := New()
	q := map[string][]string{"in_tree": {"12345678123412341234123456789abc"}}
	if err := set.ProviderListQuery(mv.Nested).ValidateQuery(q); err != nil {
		t.Errorf("8.0.0 accepts a dashless in_tree: %v", err)
	}
	err := set.ProviderListQueryOf(release.V8, mv.Nested).ValidateQuery(q)
	if err != nil {
		t.Errorf("ProviderListQueryOf(V8) accepts a dashless in_tree: %v", err)
	}
	err = set.ProviderListQueryOf(release.V15, mv.Nested).ValidateQuery(q)
	if err == nil {
		t.Fatal("15.0.0 must refuse a dashless in_tree")
	}
	want := "'12345678123412341234123456789abc' is not a 'uuid'"
	if got := err.Error(); !strings.HasPrefix(got, want) {
		t.Errorf("error %q, want it to start with %q", got, want)
	}
}
