package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/testkit/daemontest"
)

// readsConfig writes a config whose replicas follow the feed only when a
// request asks (poll_interval 1h), so that a replica's memory lags until
// a read confirms it, with max_staleness as given.
func readsConfig(t *testing.T, maxStaleness string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "replicas.yaml")
	body := "database:\n  change_feed:\n    poll_interval: 1h\n    max_staleness: " + maxStaleness + "\n"
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// killDatabase kills MariaDB and returns a function that restarts it,
// which the test also gets at its end if it stopped before.
func killDatabase(t *testing.T, set *replicaSet) (restart func()) {
	t.Helper()
	if err := set.db.Kill(); err != nil {
		t.Fatalf("kill MariaDB: %v", err)
	}
	down := true
	restart = func() {
		if !down {
			return
		}
		down = false
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := set.db.Restart(ctx); err != nil {
			t.Fatalf("restart MariaDB: %v", err)
		}
	}
	t.Cleanup(restart)
	return restart
}

// unconfirmedReads is replica s's count of unconfirmed reads answered
// so, from /metrics.
func unconfirmedReads(t *testing.T, s *daemontest.Daemon, answer string) float64 {
	t.Helper()
	m := s.API.Scrape(t, "/metrics")
	v, ok := m.Value("placement_syncd_store_feed_unconfirmed_reads_total", "answer="+answer)
	if !ok {
		t.Fatalf("no unconfirmed reads series with answer=%s: %s", answer, m.Grep("unconfirmed"))
	}
	return v
}

// TestE2E_ReplicaReadsRefused: a provider is created through replica 0
// while replica 1 lags; with MariaDB killed, replica 1 cannot confirm
// that it holds the write, and answers the read 503 in Placement's error
// JSON, not the 404 its memory gives. Once MariaDB is back, the read
// answers 200 with the provider.
func TestE2E_ReplicaReadsRefused(t *testing.T) {
	t.Parallel()
	set := startReplicaSet(t, 2, "--config", readsConfig(t, "0s"))
	const rp = "aaaaaaaa-1111-4222-8333-444444444444"
	set.Get(1).API.At("1.39").MustDo(t, 200, "GET", "/resource_providers", nil)
	set.Get(0).API.At("1.20").MustDo(t, 200, "POST", "/resource_providers", `{"uuid":"`+rp+`","name":"written-before-the-outage"}`)
	restart := killDatabase(t, set)

	r, _ := set.Get(1).API.Do(t.Context(), "GET", "/resource_providers/"+rp, nil)
	checkReadRefused(t, r.Code, r.Body)
	if n := unconfirmedReads(t, set.Get(1), "refused"); n < 1 {
		t.Errorf("refused reads on /metrics = %g, want at least 1", n)
	}

	restart()
	daemontest.Soon(t, "the read once MariaDB is back", func() error {
		r, _ := set.Get(1).API.Do(t.Context(), "GET", "/resource_providers/"+rp, nil)
		if r.Code != 200 || !bytes.Contains(r.Body, []byte("written-before-the-outage")) {
			return fmt.Errorf("%d %s", r.Code, r.Body)
		}
		return nil
	})
}

// checkReadRefused checks a 503 in Placement's error JSON.
func checkReadRefused(t *testing.T, code int, body []byte) {
	t.Helper()
	if code != 503 {
		t.Fatalf("read with MariaDB down: %d %s, want 503", code, body)
	}
	var doc struct {
		Errors []struct {
			Status int    `json:"status"`
			Title  string `json:"title"`
			Code   string `json:"code"`
			Detail string `json:"detail"`
		} `json:"errors"`
	}
	if err := json.Unmarshal(body, &doc); err != nil || len(doc.Errors) != 1 {
		t.Fatalf("body %s: want Placement's error JSON (%v)", body, err)
	}
	e := doc.Errors[0]
	if e.Status != 503 || e.Title != "Service Unavailable" || e.Code != "placement.undefined_code" ||
		!bytes.Contains([]byte(e.Detail), []byte("acknowledged write")) {
		t.Errorf("error %+v", e)
	}
}

// TestE2E_ReplicaReadsStale: with max_staleness 1h, replica 1 answers a
// read from memory while MariaDB is down, and counts and logs it as
// stale.
func TestE2E_ReplicaReadsStale(t *testing.T) {
	t.Parallel()
	set := startReplicaSet(t, 2, "--config", readsConfig(t, "1h"))
	const rp = "bbbbbbbb-1111-4222-8333-444444444444"
	set.Get(0).API.At("1.20").MustDo(t, 200, "POST", "/resource_providers", `{"uuid":"`+rp+`","name":"held-by-both"}`)
	set.Get(1).API.At("1.39").MustDo(t, 200, "GET", "/resource_providers/"+rp, nil)
	killDatabase(t, set)

	body := set.Get(1).API.At("1.39").MustDo(t, 200, "GET", "/resource_providers/"+rp, nil).Body
	if !bytes.Contains(body, []byte("held-by-both")) {
		t.Errorf("stale answer %s", body)
	}
	if n := unconfirmedReads(t, set.Get(1), "stale"); n != 1 {
		t.Errorf("stale reads on /metrics = %g, want 1", n)
	}
	if n := unconfirmedReads(t, set.Get(1), "refused"); n != 0 {
		t.Errorf("refused reads on /metrics = %g, want 0", n)
	}
	daemontest.Soon(t, "the stale read in the log", func() error {
		if _, ok := set.Get(1).Log.Find("read not confirmed with the change feed", map[string]string{"answer": "stale"}); !ok {
			return fmt.Errorf("no stale read logged")
		}
		return nil
	})
}
