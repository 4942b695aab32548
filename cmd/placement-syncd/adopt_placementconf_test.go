package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/testkit/daemontest"
	"github.com/placement-syncd/placement-syncd/testkit/mariadbtest"
	"github.com/placement-syncd/placement-syncd/testkit/placementtest"
)

// placementConfOnMySQL: placement.conf naming Placement's own MariaDB
// database is refused at start, naming the file, line, section and key
// and the import to run, with the password hidden; naming a MySQL
// database of ours, serve starts on it and serves what was imported.
func placementConfOnMySQL(t *testing.T, maria *mariadbtest.Server, src string, ref *placementtest.Server) {
	srcDB := mustURL(t, src).MySQL.DBName
	const pw = "pw-conf-S3cret"
	if err := maria.Exec(context.Background(), "", "CREATE USER 'placement'@'127.0.0.1' IDENTIFIED BY '"+pw+"'",
		"GRANT ALL ON "+srcDB+".* TO 'placement'@'127.0.0.1'"); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	conf := filepath.Join(dir, "placement.conf")
	writeFile(t, conf, devstackConf(t, "mysql+pymysql://placement:"+pw+"@"+maria.Addr+"/"+srcDB+"?charset=utf8&plugin=dbcounter"))
	code, out := runCmd(t, "serve", "--placement-conf", conf, "--listen", "127.0.0.1:0")
	masked := "mysql+pymysql://placement:***@" + maria.Addr + "/" + srcDB
	if code != exitSchema || strings.Contains(out, pw) ||
		!strings.Contains(out, conf+":6: [placement_database] connection: "+masked) ||
		!strings.Contains(out, "is OpenStack Placement's own database") ||
		!strings.Contains(out, "'placement-syncd db import --from "+masked) {
		t.Fatalf("serve on Placement's own database: exit %d\n%s", code, out)
	}

	ours := maria.URL(maria.NewDatabase(t))
	if code, out := runCmd(t, "db", "import", "--from", src, "--db", ours); code != 0 {
		t.Fatalf("import: exit %d\n%s", code, out)
	}
	writeFile(t, conf, devstackConf(t, ours))
	yml := filepath.Join(dir, "ours.yaml")
	writeFile(t, yml, "api:\n  auth_strategy: noauth2\npolicy:\n  enforce_scope: false\n  enforce_new_defaults: false\n")
	d := syncd.Start(t, daemontest.Options{InProcess: true, Args: []string{"serve", "--placement-conf", conf, "--config", yml, "--listen", "127.0.0.1:0"}})
	got := newPlacementAPI(t, d.URL, "admin").do("GET", "/resource_providers", "1.14", nil, 200)
	want := newPlacementAPI(t, ref.URL, ref.Token).do("GET", "/resource_providers", "1.14", nil, 200)
	if n, m := len(got["resource_providers"].([]any)), len(want["resource_providers"].([]any)); n != m || n == 0 {
		t.Errorf("serve on our MySQL database from placement.conf: %d providers, the reference %d", n, m)
	}
	if code := d.Stop(t); code != exitOK {
		t.Errorf("serve exited %d:\n%s", code, d.Log)
	}
	if log := d.Log.String(); !strings.Contains(log, `"database":"`+dbName(mustURL(t, ours))) {
		t.Errorf("the log does not name our MySQL database:\n%s", log)
	}
}
