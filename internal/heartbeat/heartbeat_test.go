package heartbeat

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestPost: the record arrives as the JSON the reconciler decodes, with
// the token; a refusal is an error naming the status.
func TestPost(t *testing.T) {
	at := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	var got map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Auth-Token") != "tok" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if err := json.NewDecoder(r.Body).Decode(&got); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	rec := Record{Host: "h", Binary: ComputeBinary, Version: OwnerTraitVersion, UpdatedAt: at}
	if err := Post(t.Context(), srv.URL, "tok", rec); err != nil {
		t.Fatal(err)
	}
	// Deleted and forced_down are left out when false: an agent's record
	// is exactly host, binary, version and updated_at.
	if len(got) != 4 || got["host"] != "h" || got["binary"] != "nova-compute" || got["version"] != 73.0 || got["updated_at"] != "2024-05-01T12:00:00Z" {
		t.Fatalf("posted %v", got)
	}
	if err := Post(t.Context(), srv.URL, "", rec); err == nil || !strings.Contains(err.Error(), "answered 401") {
		t.Fatalf("Post without token = %v", err)
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		rec  Record
		want string
	}{
		{Record{Host: "h", Binary: "b"}, ""},
		{Record{Binary: "b"}, "host is required"},
		{Record{Host: "h"}, "binary is required"},
		{Record{Host: "h", Binary: "b", Version: -1}, "version must not be negative"},
	} {
		err := tc.rec.Validate()
		if (err == nil) != (tc.want == "") || (err != nil && err.Error() != tc.want) {
			t.Fatalf("Validate(%+v) = %v, want %q", tc.rec, err, tc.want)
		}
	}
}
