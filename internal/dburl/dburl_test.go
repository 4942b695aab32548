package dburl

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseSQLite(t *testing.T) {
	cases := map[string]string{
		"sqlite:////var/lib/placement/placement.sqlite": "/var/lib/placement/placement.sqlite",
		"sqlite:///placement.db":                        "placement.db",
		"sqlite+pysqlite:////tmp/p.db":                  "/tmp/p.db",
	}
	for in, want := range cases {
		u, err := Parse(in)
		if err != nil {
			t.Fatalf("Parse(%q): %v", in, err)
		}
		if u.Driver != SQLite || u.Path != want || u.DSN() != "" {
			t.Errorf("Parse(%q) = %+v, want sqlite %q", in, u, want)
		}
	}
}

func TestParseMySQLForms(t *testing.T) {
	u, err := Parse("mysql+pymysql://placement:s%40cret@db.example:3307/placement?charset=utf8&plugin=dbcounter")
	if err != nil {
		t.Fatal(err)
	}
	c := u.MySQL
	if u.Driver != MySQL || c.User != "placement" || c.Passwd != "s@cret" || c.Addr != "db.example:3307" ||
		c.DBName != "placement" || c.Net != "tcp" || !c.ParseTime {
		t.Fatalf("parsed %+v", c)
	}
	if !reflect.DeepEqual(u.Ignored, []string{"plugin"}) {
		t.Errorf("ignored = %v, want [plugin]", u.Ignored)
	}
	if s := u.String(); strings.Contains(s, "cret") || !strings.Contains(s, "placement:***@db.example:3307") {
		t.Errorf("String() = %q leaks or loses parts", s)
	}

	u, err = Parse("mysql://root@127.0.0.1/placement?unix_socket=/run/mysqld/mysqld.sock&connect_timeout=2.5")
	if err != nil {
		t.Fatal(err)
	}
	if u.MySQL.Net != "unix" || u.MySQL.Addr != "/run/mysqld/mysqld.sock" || u.MySQL.Timeout != 2500*time.Millisecond {
		t.Errorf("socket/timeout not applied: %+v", u.MySQL)
	}
	if u, err = Parse("mysql+pymysql://p@dbhost/placement"); err != nil || u.MySQL.Addr != "dbhost:3306" {
		t.Errorf("default port: %v %+v", err, u)
	}
}

func TestParseErrorsHidePassword(t *testing.T) {
	bad := []string{
		"postgresql://u:hunter2@h/db",
		"mysql+pymysql://u:hunter2@h/",
		"mysql+pymysql://u:hunter2@h/db?charset=latin1",
		"mysql://u:hunter2@h/db?connect_timeout=soon",
		"mysql://u:hunter2@h/db?ssl_ca=/nonexistent/ca.pem",
		"sqlite://",
		"placement.db",
	}
	for _, in := range bad {
		_, err := Parse(in)
		if err == nil {
			t.Errorf("Parse(%q) accepted", in)
			continue
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("Parse(%q) error leaks the password: %v", in, err)
		}
	}
}

func TestRedact(t *testing.T) {
	if got := Redact("mysql://a:b@h/d"); got != "mysql://a:***@h/d" {
		t.Errorf("Redact = %q", got)
	}
	if got := Redact("mysql://a@h/d"); got != "mysql://a@h/d" {
		t.Errorf("Redact without password = %q", got)
	}
}
