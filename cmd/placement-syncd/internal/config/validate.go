package config

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/placement-syncd/placement-syncd/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/dbstore"
	"github.com/placement-syncd/placement-syncd/placementsrv/release"
)

// fieldError is a bad value at a dotted key path ("api.listen").
type fieldError struct {
	Key string
	Msg string
}

func (e *fieldError) Error() string { return e.Key + ": " + e.Msg }

// problems collects one fieldError per bad key, so that an operator sees
// every problem at once.
type problems []error

func (p *problems) bad(key, format string, args ...any) {
	*p = append(*p, &fieldError{Key: key, Msg: fmt.Sprintf(format, args...)})
}

// check is the one shape of a validation: it reads the whole
// configuration (some rules span sections) and reports bad keys.
type check func(c *Config, p *problems)

// checks are every validation, in the order their errors are reported.
func checks() []check {
	return []check{checkAPIListen, checkAuth, checkAPI, checkCandidates, checkDatabase, checkLog,
		checkAgent, checkReconciler, checkReplicas, checkSafety, checkMetrics, checkClouds, checkCapacity}
}

// Validate checks every value, returning one error per bad key (joined
// with errors.Join).
func (c *Config) Validate() error {
	var p problems
	for _, check := range checks() {
		check(c, &p)
	}
	return errors.Join(p...)
}

func checkAPIListen(c *Config, p *problems) {
	if err := listenError(c.API.Listen); err != nil {
		p.bad("api.listen", "invalid address %q: %v", c.API.Listen, err)
	}
}

func checkAPI(c *Config, p *problems) {
	if c.API.ShutdownGrace < 0 {
		p.bad("api.shutdown_grace", "must not be negative, got %s", c.API.ShutdownGrace)
	}
	for key, d := range map[string]time.Duration{"api.read_timeout": c.API.ReadTimeout, "api.write_timeout": c.API.WriteTimeout, "api.idle_timeout": c.API.IdleTimeout} {
		if d <= 0 {
			p.bad(key, "must be positive, got %s", d)
		}
	}
	if c.API.MaxConnections < 1 {
		p.bad("api.max_connections", "must be at least 1, got %d", c.API.MaxConnections)
	}
	if mv, err := microversion.Parse(c.API.MaxMicroversion); err != nil || !mv.Supported() {
		p.bad("api.max_microversion", "invalid microversion %q (from %s to %s)", c.API.MaxMicroversion, microversion.Min, microversion.Max)
	}
	if _, err := release.Parse(c.API.Release); err != nil {
		p.bad("api.release", "%v", err)
	}
}

func checkDatabase(c *Config, p *problems) {
	if c.Database.Connection != "" {
		if _, err := dbstore.Locate(c.Database.Connection, c.Database.Path); err != nil {
			p.bad("database.connection", "%v", err)
		}
	} else if c.Database.Path == "" {
		p.bad("database.path", "must not be empty")
	}
	if c.Database.BusyTimeout <= 0 {
		p.bad("database.busy_timeout", "must be positive, got %s", c.Database.BusyTimeout)
	}
}

func checkLog(c *Config, p *problems) {
	if !slices.Contains(logLevels, c.Log.Level) {
		p.bad("log.level", "invalid level %q (one of %s)", c.Log.Level, strings.Join(logLevels, ", "))
	}
	if !slices.Contains(logFormats, c.Log.Format) {
		p.bad("log.format", "invalid format %q (one of %s)", c.Log.Format, strings.Join(logFormats, ", "))
	}
}

var (
	logLevels  = []string{"debug", "info", "warn", "error"}
	logFormats = []string{"json", "console"}
)

// listenError accepts host:port with a numeric port; an empty host means
// every interface.
func listenError(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		var ae *net.AddrError
		if errors.As(err, &ae) {
			return errors.New(ae.Err)
		}
		return err
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 0 || p > 65535 {
		return fmt.Errorf("port %q is not a number from 0 to 65535", port)
	}
	if strings.ContainsAny(host, " /") {
		return fmt.Errorf("host %q is not a host name or IP address", host)
	}
	return nil
}
