package handlers

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
	"github.com/placement-syncd/placement-syncd/placementsrv/schema"
)

// FuzzDecodeTraits feeds arbitrary PUT provider traits bodies to the
// decoder: it must never panic, must answer a client error for anything it
// rejects, and whatever it accepts must be a well-formed request.
func FuzzDecodeTraits(f *testing.F) {
	for _, seed := range []string{
		`{"traits": ["CUSTOM_A"], "resource_provider_generation": 0}`,
		`{"traits": [], "resource_provider_generation": 1.0}`,
		`{"traits": [""], "resource_provider_generation": 1}`,
		`{"traits": "x", "resource_provider_generation": 1}`,
		`{"traits": [], "resource_provider_generation": 1e400}`,
		`{"traits": [], "resource_provider_generation": -99999999999999999999}`,
		`{"traits": [], "resource_provider_generation": 1, "x": null}`,
		`{"traits": ["\ud800"], "resource_provider_generation": 1}`,
		`[`, ``, `null`, `{"traits": [1]}`,
	} {
		f.Add([]byte(seed))
	}
	a := &API{schemas: schema.New()}
	f.Fuzz(func(t *testing.T, body []byte) {
		r := fuzzRequest(body, 39)
		got, err := a.decodeProviderTraits(r)
		if err != nil {
			he, ok := apierror.As(err)
			if !ok || he.Status != http.StatusBadRequest {
				t.Fatalf("not a 400: %v", err)
			}
			return
		}
		if !json.Valid(body) {
			t.Fatalf("accepted invalid JSON %q", body)
		}
		var raw struct {
			Traits     []string    `json:"traits"`
			Generation json.Number `json:"resource_provider_generation"`
		}
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		if err := dec.Decode(&raw); err != nil {
			t.Fatalf("accepted %q that does not decode: %v", body, err)
		}
		if len(got.Traits) != len(raw.Traits) {
			t.Fatalf("traits %q vs %q", got.Traits, raw.Traits)
		}
		for i, tr := range got.Traits {
			if n := len([]rune(tr)); n < 1 || n > 255 || tr != raw.Traits[i] {
				t.Fatalf("trait %q accepted", tr)
			}
		}
		if got.Generation != nil {
			if i, err := raw.Generation.Int64(); err == nil && i != *got.Generation {
				t.Fatalf("generation %d from %s", *got.Generation, raw.Generation)
			}
		}
	})
}
