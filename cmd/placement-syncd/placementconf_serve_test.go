package main

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// serve --placement-conf with devstack's file starts and serves: GET /
// answers, and a request without a token is refused as Keystone's
// middleware does, pointing at the configured Keystone.
func TestPlacementConf_ServeStarts(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "placement.conf")
	writeFile(t, conf, devstackConf(t, "sqlite:///"+filepath.Join(dir, "placement.db")))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	lw := newLogWatcher()
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--placement-conf", conf, "--listen", "127.0.0.1:0"}, io.Discard, lw)
	}()
	addr := lw.listenAddr(t, ctx)
	getRootOK(t, ctx, addr)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/resource_providers", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), "http://10.0.0.5/identity") {
		t.Errorf("GET /resource_providers without a token: %s, WWW-Authenticate %q", resp.Status, resp.Header.Get("WWW-Authenticate"))
	}
	cancel()
	if code := <-done; code != exitOK {
		t.Errorf("serve exited %d:\n%s", code, lw.String())
	}
	log := lw.String()
	if n := strings.Count(log, "placement.conf options that mean nothing"); n != 1 || !strings.Contains(log, "keystone_authtoken.memcached_servers") {
		t.Errorf("ignored options logged %d times:\n%s", n, log)
	}
}

// A bad placement.conf stops serve with a configuration error naming the
// file, line, section and key.
func TestPlacementConf_ServeRefusesBadValues(t *testing.T) {
	path := filepath.Join(t.TempDir(), "placement.conf")
	writeFile(t, path, "[placement_database]\nconnection = postgresql://x/y\n[oslo_policy]\nenforce_scope = sometimes\n")
	code, out := runCmd(t, "serve", "--placement-conf", path)
	if code != exitUsage || !strings.Contains(out, "placement-syncd: "+path+":4: [oslo_policy] enforce_scope") {
		t.Errorf("serve: exit %d\n%s", code, out)
	}
}
