package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/testkit/daemontest"
	"github.com/placement-syncd/placement-syncd/testkit/mariadbtest"
)

// TestE2E_MySQL runs the binary on a real MariaDB named by a
// mysql+pymysql:// URL with a password: db version and db migrate, serve,
// and a restart of MariaDB under serve: the write during the outage fails
// with Placement's error body and leaves nothing, and the same process
// writes again afterwards. The password appears in no output.
func TestE2E_MySQL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := mariadbtest.Start(t)
	db := s.NewDatabase(t)
	const pw = "pw-S3cret-e2e"
	if err := s.Exec(ctx, "", "CREATE USER 'placement'@'127.0.0.1' IDENTIFIED BY '"+pw+"'",
		"GRANT ALL ON "+db+".* TO 'placement'@'127.0.0.1'"); err != nil {
		t.Fatal(err)
	}
	url := "mysql+pymysql://placement:" + pw + "@" + s.Addr + "/" + db + "?charset=utf8mb4"
	dir := t.TempDir()
	outputs := []string{}
	run := func(want int, args ...string) daemontest.Result {
		t.Helper()
		r := syncd.Exec(t, dir, args...)
		outputs = append(outputs, r.Stdout, r.Stderr)
		if r.Code != want {
			t.Fatalf("%v: exit %d, want %d\nstdout: %s\nstderr: %s", args, r.Code, want, r.Stdout, r.Stderr)
		}
		return r
	}
	if r := run(exitSchema, "db", "version", "--db", url); !strings.Contains(r.Stdout, "database schema version: 0") {
		t.Errorf("db version of an empty database: %s", r.Stdout)
	}
	if r := run(exitOK, "db", "migrate", "--db", url); !strings.Contains(r.Stdout, "migrated from schema version 0 to 4") {
		t.Errorf("db migrate: %s", r.Stdout)
	}
	run(exitOK, "db", "version", "--db", url)
	run(exitFailure, "db", "version", "--db", strings.Replace(url, pw, "wrong-"+pw, 1))

	srv := syncd.Start(t, daemontest.Options{Args: serveArgs(url)})
	api := srv.API.At("1.6")
	put := func(trait string, want ...int) []byte {
		t.Helper()
		r, err := api.Do(ctx, "PUT", "/traits/"+trait, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if r.Code == w {
				return r.Body
			}
		}
		t.Fatalf("PUT /traits/%s: %d %s, want one of %v", trait, r.Code, r.Body, want)
		return nil
	}
	put("CUSTOM_BEFORE", 201)
	if err := s.Kill(); err != nil {
		t.Fatal(err)
	}
	var e struct {
		Errors []struct{ Status int } `json:"errors"`
	}
	if err := json.Unmarshal(put("CUSTOM_DURING", 500, 503), &e); err != nil || len(e.Errors) != 1 {
		t.Fatalf("error body during the outage: %v %+v", err, e)
	}
	if err := s.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	put("CUSTOM_AFTER", 201)
	put("CUSTOM_DURING", 201) // it was not applied, so it is created now
	api.MustDo(t, 204, "GET", "/traits/CUSTOM_BEFORE", nil)
	log := srv.Log.String()
	for _, out := range append(outputs, log) {
		if strings.Contains(out, pw) {
			t.Fatalf("the password appears in an output:\n%s", out)
		}
	}
	if !strings.Contains(log, "placement:***@") {
		t.Errorf("serve's log does not name the database with its password masked:\n%s", srv.Log.Tail(2000))
	}
}
