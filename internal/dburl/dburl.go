// Package dburl reads database addresses in the SQLAlchemy form that
// OpenStack's configuration files use ("mysql+pymysql://user:pass@host/db
// ?charset=utf8", "sqlite:////var/lib/placement/placement.sqlite") and
// the plain "mysql://" form, so that one string names a database in
// placement.conf, in our YAML and on the command line alike.
package dburl

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Driver names the kind of database a URL addresses.
type Driver string

// The drivers this process speaks.
const (
	SQLite Driver = "sqlite"
	MySQL  Driver = "mysql"
)

// URL is a parsed database address.
type URL struct {
	Driver Driver
	// Path is the SQLite file, as SQLAlchemy reads it: "sqlite:///x.db"
	// is the relative path x.db, "sqlite:////srv/x.db" the absolute
	// /srv/x.db.
	Path string
	// MySQL is the connection for go-sql-driver/mysql; nil for SQLite.
	MySQL *mysql.Config
	// Ignored lists query parameters that are valid for SQLAlchemy or
	// PyMySQL but mean nothing here (e.g. devstack's plugin=dbcounter),
	// sorted, so that callers can log them once.
	Ignored []string
	raw     *url.URL
}

// mysqlSchemes are the SQLAlchemy dialect+driver names of MySQL that
// OpenStack deployments write; all speak the same protocol.
var mysqlSchemes = map[string]bool{
	"mysql": true, "mysql+pymysql": true, "mysql+mysqldb": true, "mysql+mysqlconnector": true,
	"mariadb": true, "mariadb+pymysql": true, "mariadb+mysqldb": true,
}

// Parse reads a database URL. Errors say what is wrong without repeating
// the password.
func Parse(s string) (*URL, error) {
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return nil, fmt.Errorf("database URL %q: want scheme://..., e.g. sqlite:////var/lib/placement-syncd/placement.db or mysql+pymysql://user:pass@host/db", Redact(s))
	}
	switch {
	case scheme == "sqlite" || strings.HasPrefix(scheme, "sqlite+"):
		return parseSQLite(rest)
	case mysqlSchemes[scheme]:
		return parseMySQL(s)
	}
	return nil, fmt.Errorf("database URL %q: unsupported scheme %q (want sqlite or mysql[+driver])", Redact(s), scheme)
}

func parseSQLite(rest string) (*URL, error) {
	// SQLAlchemy: sqlite://<nohost>/<path>, so the path is what follows
	// the third slash; a query string carries driver options only.
	path, query, _ := strings.Cut(rest, "?")
	if !strings.HasPrefix(path, "/") || len(path) < 2 {
		return nil, fmt.Errorf("database URL sqlite://%s: want sqlite:///relative/path or sqlite:////absolute/path (an in-memory database keeps nothing)", rest)
	}
	u := &URL{Driver: SQLite, Path: path[1:]}
	if query != "" {
		q, err := url.ParseQuery(query)
		if err != nil {
			return nil, fmt.Errorf("database URL sqlite://%s: query: %w", rest, err)
		}
		u.Ignored = sortedKeys(q)
	}
	return u, nil
}

func parseMySQL(s string) (*URL, error) {
	pu, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("database URL %q: %w", Redact(s), stripURL(err))
	}
	c := mysql.NewConfig()
	c.Net = "tcp"
	c.ParseTime = true
	if pu.User != nil {
		c.User = pu.User.Username()
		c.Passwd, _ = pu.User.Password()
	}
	host := pu.Hostname()
	if host == "" {
		host = "localhost"
	}
	port := pu.Port()
	if port == "" {
		port = "3306"
	}
	c.Addr = net.JoinHostPort(host, port)
	c.DBName = strings.TrimPrefix(pu.Path, "/")
	if c.DBName == "" || strings.Contains(c.DBName, "/") {
		return nil, fmt.Errorf("database URL %q: want one database name after the host, e.g. mysql+pymysql://user:pass@host/placement", Redact(s))
	}
	u := &URL{Driver: MySQL, MySQL: c, raw: pu}
	if err := u.applyQuery(pu.Query()); err != nil {
		return nil, fmt.Errorf("database URL %q: %w", Redact(s), err)
	}
	return u, nil
}

// applyQuery takes the PyMySQL connection arguments that have a meaning
// here and records the rest as ignored.
func (u *URL) applyQuery(q url.Values) error {
	c := u.MySQL
	for _, k := range sortedKeys(q) {
		v := q.Get(k)
		switch k {
		case "charset":
			// Our tables are utf8mb4; the connection follows them
			// whatever a placement.conf says (utf8 is a subset).
			if v != "utf8" && v != "utf8mb4" && v != "utf8mb3" {
				return fmt.Errorf("charset=%s: only utf8 and utf8mb4 are supported", v)
			}
		case "unix_socket":
			c.Net, c.Addr = "unix", v
		case "connect_timeout", "read_timeout", "write_timeout":
			secs, err := strconv.ParseFloat(v, 64)
			if err != nil || secs <= 0 {
				return fmt.Errorf("%s=%s: want a positive number of seconds", k, v)
			}
			d := time.Duration(secs * float64(time.Second))
			switch k {
			case "connect_timeout":
				c.Timeout = d
			case "read_timeout":
				c.ReadTimeout = d
			default:
				c.WriteTimeout = d
			}
		case "ssl_ca":
			if err := u.useCA(v); err != nil {
				return err
			}
		default:
			u.Ignored = append(u.Ignored, k)
		}
	}
	return nil
}

func (u *URL) useCA(path string) error {
	pem, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("ssl_ca: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return fmt.Errorf("ssl_ca: %s holds no PEM certificate", path)
	}
	host, _, err := net.SplitHostPort(u.MySQL.Addr)
	if err != nil {
		host = u.MySQL.Addr
	}
	u.MySQL.TLS = &tls.Config{RootCAs: pool, ServerName: host, MinVersion: tls.VersionTLS12}
	return nil
}

// DSN is the go-sql-driver/mysql data source name; "" for SQLite.
func (u *URL) DSN() string {
	if u.MySQL == nil {
		return ""
	}
	return u.MySQL.FormatDSN()
}

// String is the URL with its password replaced by "***", for logs.
func (u *URL) String() string {
	if u.Driver == SQLite {
		return "sqlite:///" + u.Path
	}
	return Redact(u.raw.String())
}

// Redact replaces the password of a URL-like string by "***"; strings it
// cannot read come back unchanged.
func Redact(s string) string {
	pu, err := url.Parse(s)
	if err != nil || pu.User == nil {
		return s
	}
	if _, has := pu.User.Password(); !has {
		return s
	}
	pu.User = url.UserPassword(pu.User.Username(), "***")
	return strings.Replace(pu.String(), "%2A%2A%2A", "***", 1)
}

// stripURL drops the URL that net/url repeats in its errors, since it
// may hold a password.
func stripURL(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}

func sortedKeys(q url.Values) []string {
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
