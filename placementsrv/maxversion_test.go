package placementsrv

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/placement-syncd/placement-syncd/microversion"
)

func TestMaxMicroversionCap(t *testing.T) {
	ts := startServerOpts(t, nil, func(o *Options) { o.MaxMicroversion = microversion.Version{Major: 1, Minor: 25} })
	if _, err := New(Options{Store: ts.Store, MaxMicroversion: microversion.Version{Major: 1, Minor: 40}}); err == nil {
		t.Fatal("New accepted a cap above 1.39")
	}
	get := func(t *testing.T, version string) testResponse {
		t.Helper()
		return ts.do(t, call{Method: http.MethodGet, Path: "/", Version: version})
	}
	tests := []struct {
		version    string
		wantStatus int
		wantHeader string
	}{
		{"1.25", 200, "placement 1.25"},
		{"latest", 200, "placement 1.25"},
		{"1.26", 406, ""},
		{"1.39", 406, ""},
	}
	for _, tc := range tests {
		t.Run(tc.version, func(t *testing.T) {
			resp := get(t, tc.version)
			if resp.Status != tc.wantStatus {
				t.Fatalf("status %d, want %d", resp.Status, tc.wantStatus)
			}
			if tc.wantHeader != "" && resp.Header.Get("OpenStack-API-Version") != tc.wantHeader {
				t.Fatalf("version header %q, want %q", resp.Header.Get("OpenStack-API-Version"), tc.wantHeader)
			}
		})
	}
	t.Run("version document", func(t *testing.T) {
		var doc struct {
			Versions []struct {
				Max string `json:"max_version"`
			} `json:"versions"`
		}
		if err := json.Unmarshal(get(t, "").Body, &doc); err != nil {
			t.Fatal(err)
		}
		if len(doc.Versions) != 1 || doc.Versions[0].Max != "1.25" {
			t.Fatalf("versions %+v, want max 1.25", doc.Versions)
		}
	})
}
