package main

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/testkit/daemontest"
)

// serve --placement-conf with devstack's file starts and serves: GET /
// answers, and a request without a token is refused as Keystone's
// middleware does, pointing at the configured Keystone.
func TestPlacementConf_ServeStarts(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "placement.conf")
	writeFile(t, conf, devstackConf(t, "sqlite:///"+filepath.Join(dir, "placement.db")))
	d := syncd.Start(t, daemontest.Options{InProcess: true, Args: []string{"serve", "--placement-conf", conf, "--listen", "127.0.0.1:0"}})
	d.API.MustDo(t, http.StatusOK, http.MethodGet, "/", nil)
	r := d.API.As("").MustDo(t, http.StatusUnauthorized, http.MethodGet, "/resource_providers", nil)
	if !strings.Contains(r.Header.Get("WWW-Authenticate"), "http://10.0.0.5/identity") {
		t.Errorf("GET /resource_providers without a token: WWW-Authenticate %q", r.Header.Get("WWW-Authenticate"))
	}
	if code := d.Stop(t); code != exitOK {
		t.Errorf("serve exited %d:\n%s", code, d.Log)
	}
	log := d.Log.String()
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
