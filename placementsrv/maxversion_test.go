package placementsrv

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/placement-syncd/placement-syncd/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/dbstore"
)

func TestMaxMicroversionCap(t *testing.T) {
	st, err := dbstore.OpenFile(t.Context(), filepath.Join(t.TempDir(), "p.db"), dbstore.Options{Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	if _, err := New(Options{Store: st, MaxMicroversion: microversion.Version{Major: 1, Minor: 40}}); err == nil {
		t.Fatal("New accepted a cap above 1.39")
	}
	srv, err := New(Options{Store: st, MaxMicroversion: microversion.Version{Major: 1, Minor: 25}})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)

	get := func(t *testing.T, version string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, hs.URL+"/", nil)
		req.Header.Set("x-auth-token", "admin")
		if version != "" {
			req.Header.Set("OpenStack-API-Version", "placement "+version)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
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
			if resp.StatusCode != tc.wantStatus {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.wantStatus)
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
		if err := json.NewDecoder(get(t, "").Body).Decode(&doc); err != nil {
			t.Fatal(err)
		}
		if len(doc.Versions) != 1 || doc.Versions[0].Max != "1.25" {
			t.Fatalf("versions %+v, want max 1.25", doc.Versions)
		}
	})
}
