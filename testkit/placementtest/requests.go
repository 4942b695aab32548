package placementtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"testing"

	"github.com/placement-syncd/placement-syncd/microversion"
)

// directClient opens a connection per request: uWSGI's http-socket closes
// each connection after one answer, and a write resent on a dead
// keep-alive connection is not what these helpers are for.
func directClient() *http.Client {
	return &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
}

// Do sends one request to the server as admin at microversion version
// ("" for none) with an optional JSON body, returning status and body.
func (s *Server) Do(t testing.TB, method, path, version string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatalf("placementtest: marshal: %v", err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.URL+path, rd)
	if err != nil {
		t.Fatalf("placementtest: %v", err)
	}
	req.Header.Set("X-Auth-Token", s.Token)
	req.Header.Set("Accept", "application/json")
	if version != "" {
		req.Header.Set("OpenStack-API-Version", "placement "+version)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := directClient().Do(req)
	if err != nil {
		t.Fatalf("placementtest: %s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("placementtest: read %s %s: %v", method, path, err)
	}
	return resp.StatusCode, b
}

// MustDo is Do, failing the test unless the status is want.
func (s *Server) MustDo(t testing.TB, want int, method, path, version string, body any) []byte {
	t.Helper()
	status, b := s.Do(t, method, path, version, body)
	if status != want {
		t.Fatalf("placementtest: %s %s: status %d, want %d: %s", method, path, status, want, b)
	}
	return b
}

// Allocate claims resources on one provider for consumer (a new consumer,
// at the highest microversion), as Nova does when an instance lands.
func (s *Server) Allocate(t testing.TB, consumer, provider string, resources map[string]int) {
	t.Helper()
	body := map[string]any{
		"allocations":         map[string]any{provider: map[string]any{"resources": resources}},
		"project_id":          "7c9fd8c8-6a1b-4f5e-9e3b-000000000001",
		"user_id":             "7c9fd8c8-6a1b-4f5e-9e3b-000000000002",
		"consumer_generation": nil,
		"consumer_type":       "INSTANCE",
	}
	s.MustDo(t, http.StatusNoContent, http.MethodPut, "/allocations/"+consumer, microversion.Max.String(), body)
}

// Deallocate removes all of consumer's allocations.
func (s *Server) Deallocate(t testing.TB, consumer string) {
	t.Helper()
	s.MustDo(t, http.StatusNoContent, http.MethodDelete, "/allocations/"+consumer, microversion.Max.String(), nil)
}

// Inventories reads a provider's inventories at Version; nil if the provider
// does not exist.
func (s *Server) Inventories(t testing.TB, provider string) (generation int, invs map[string]map[string]float64) {
	t.Helper()
	status, b := s.Do(t, http.MethodGet, "/resource_providers/"+provider+"/inventories", s.helperVersion(), nil)
	if status == http.StatusNotFound {
		return -1, nil
	}
	if status != http.StatusOK {
		t.Fatalf("placementtest: inventories of %s: %d %s", provider, status, b)
	}
	var doc struct {
		Generation  int                           `json:"resource_provider_generation"`
		Inventories map[string]map[string]float64 `json:"inventories"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("placementtest: %v", err)
	}
	return doc.Generation, doc.Inventories
}

// Traits reads a provider's traits, sorted.
func (s *Server) Traits(t testing.TB, provider string) (generation int, traits []string) {
	t.Helper()
	b := s.MustDo(t, http.StatusOK, http.MethodGet, "/resource_providers/"+provider+"/traits", s.helperVersion(), nil)
	var doc struct {
		Generation int      `json:"resource_provider_generation"`
		Traits     []string `json:"traits"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("placementtest: %v", err)
	}
	slices.Sort(doc.Traits)
	return doc.Generation, doc.Traits
}

// helperVersion is Version, or the highest microversion for a Server
// built without it.
func (s *Server) helperVersion() string {
	if s.Version == "" {
		return microversion.Max.String()
	}
	return s.Version
}

// String names the server in test output.
func (s *Server) String() string { return fmt.Sprintf("%s placement at %s", s.Kind, s.URL) }
