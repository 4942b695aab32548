package handlers

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

const rootUUID = "6f4c3d2a-1b0e-4f9a-8c7d-5e4f3a2b1c0d"

func TestAppendProviderJSON(t *testing.T) {
	names := []string{"plain", `q"uote\back`, "snow☃man", "ctl\x00\x01\n\r\t\x1f", "line\u2028sep\u2029", "bad\xffutf8", "<html>&"}
	for _, name := range names {
		for _, mv := range []microversion.Version{microversion.Min, microversion.Nested, microversion.Max} {
			p := store.Provider{UUID: rootUUID, Name: name, Generation: 7, RootUUID: rootUUID}
			b := appendProviderJSON(nil, p, mv)
			if !json.Valid(b) {
				t.Fatalf("invalid JSON for %q: %s", name, b)
			}
			var got map[string]any
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			want := strings.ToValidUTF8(name, "\ufffd")
			if got["name"] != want || got["generation"] != float64(7) {
				t.Errorf("round trip of %q: %v", name, got)
			}
			_, hasParent := got["parent_provider_uuid"]
			if hasParent != mv.AtLeast(microversion.Nested) {
				t.Errorf("parent_provider_uuid present=%v at %s", hasParent, mv)
			}
			wantLinks := map[microversion.Version]int{microversion.Min: 3, microversion.Nested: 6, microversion.Max: 6}[mv]
			if n := len(got["links"].([]any)); n != wantLinks {
				t.Errorf("%d links at %s", n, mv)
			}
		}
	}
}
