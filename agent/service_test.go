package agent_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/agent"
	"github.com/placement-syncd/placement-syncd/drivers"
	"github.com/placement-syncd/placement-syncd/drivers/static"
)

// TestPostServiceRecord: the record decodes strictly into the shape the
// reconciler's POST /v1/services takes, with the token.
func TestPostServiceRecord(t *testing.T) {
	got := make(chan map[string]any, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("X-Auth-Token") != "hb-token" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		var rec struct {
			Host      string    `json:"host"`
			Binary    string    `json:"binary"`
			Version   int       `json:"version"`
			UpdatedAt time.Time `json:"updated_at"`
		}
		dec := json.NewDecoder(r.Body)
		dec.DisallowUnknownFields()
		if err := dec.Decode(&rec); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		got <- map[string]any{"host": rec.Host, "binary": rec.Binary, "version": rec.Version}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	d, err := static.New(static.Options{File: "unused.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, "http://127.0.0.1:1", []drivers.Driver{d}, func(o *agent.Options) {
		o.ServiceURL, o.ServiceToken, o.NovaComputeVersion = srv.URL, "hb-token", 72
	})
	if err := e.agent.PostServiceRecord(t.Context()); err != nil {
		t.Fatal(err)
	}
	rec := <-got
	if rec["host"] != "host-a" || rec["binary"] != "nova-compute" || rec["version"] != 72 {
		t.Fatalf("record %v", rec)
	}
}
