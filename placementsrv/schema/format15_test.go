package schema

import (
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/release"
)

// The expectations are Python's jsonschema 4.10.3
// FormatChecker().conforms(s, "uuid") on Debian 12.
func TestIsHyphenatedUUID(t *testing.T) {
	for s, want := range map[string]bool{
		"12345678-1234-1234-1234-123456789abc":          true,
		"12345678-1234-1234-1234-123456789ABC":          true,
		"12345678123412341234123456789abc":              false,
		"{12345678-1234-1234-1234-123456789abc}":        false,
		"urn:uuid:12345678-1234-1234-1234-123456789abc": false,
		"12345678-1234-1234-1234-12345678-9abc":         true,
		"12345678-1234-1234-1234-1234_56789ab":          true,
		"12345678-1234-1234-1234-123456789ab":           false,
		"12345678-1234-1234-1234-123456789abg":          false,
		"0x345678-1234-1234-1234-123456789abc":          true,
		"12345678-1234-1234-1234-123456789abc ":         false,
		"":                                              false,
		"1234-5678-1234-1234-123456789abc":              false,
	} {
		if got := isHyphenatedUUID(s); got != want {
			t.Errorf("isHyphenatedUUID(%q) = %v, want %v", s, got, want)
		}
	}
	if !isHyphenatedUUID(7) {
		t.Error("a non-string must pass, as jsonschema's checker lets it")
	}
}

func TestProviderListQueryOfRelease(t *testing.T) {
	set := New()
	q := map[string][]string{"in_tree": {"12345678123412341234123456789abc"}}
	if err := set.ProviderListQuery(14).ValidateQuery(q); err != nil {
		t.Errorf("8.0.0 accepts a dashless in_tree: %v", err)
	}
	err := set.ProviderListQueryOf(release.V8, 14).ValidateQuery(q)
	if err != nil {
		t.Errorf("ProviderListQueryOf(V8) accepts a dashless in_tree: %v", err)
	}
	err = set.ProviderListQueryOf(release.V15, 14).ValidateQuery(q)
	if err == nil {
		t.Fatal("15.0.0 must refuse a dashless in_tree")
	}
	want := "'12345678123412341234123456789abc' is not a 'uuid'"
	if got := err.Error(); !strings.HasPrefix(got, want) {
		t.Errorf("error %q, want it to start with %q", got, want)
	}
}
