package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/placement-syncd/placement-syncd/internal/dburl"
	"github.com/placement-syncd/placement-syncd/internal/httpserve"
	"github.com/placement-syncd/placement-syncd/placementsrv/dbstore"
	"github.com/placement-syncd/placement-syncd/placementsrv/release"
)

// Config is the whole configuration file. The YAML types live here, in
// main, and are mapped to each component's Options; no component reads
// YAML itself. There is deliberately no UnmarshalYAML on these types:
// a custom unmarshaler decodes through yaml.Node, which loses
// KnownFields (go-yaml/yaml#460).
//
// A section for the agent is planned; until it exists its keys are
// rejected as unknown.
type Config struct {
	API      APIConfig      `yaml:"api"`
	Database DatabaseConfig `yaml:"database"`
	Log      LogConfig      `yaml:"log"`
	Agent    AgentConfig    `yaml:"agent"`
	Metrics  MetricsConfig  `yaml:"metrics"`

	KeystoneAuthToken KeystoneAuthTokenConfig `yaml:"keystone_authtoken"`
	Policy            PolicyConfig            `yaml:"policy"`
	CORS              CORSConfig              `yaml:"cors"`
	// Reconciler is in config_reconciler.go.
	Reconciler ReconcilerConfig `yaml:"reconciler"`
}

// APIConfig configures the Placement API listener.
type APIConfig struct {
	// Listen is the TCP address, host:port. The default binds loopback
	// only, so a fresh install is not reachable from the network.
	Listen string `yaml:"listen"`
	// AuthStrategy is how requests are authenticated: "noauth2" or
	// "keystone".
	AuthStrategy string `yaml:"auth_strategy"`
	// AllowInsecureNoauth lets noauth2 listen beyond loopback (see
	// config_safety.go); every start then logs a warning.
	AllowInsecureNoauth bool `yaml:"allow_insecure_noauth"`
	// ShutdownGrace is how long in-flight requests may run after a
	// shutdown signal.
	ShutdownGrace time.Duration `yaml:"shutdown_grace"`
	// ReadTimeout, WriteTimeout, IdleTimeout and MaxConnections bound
	// what clients can hold of the API listener (httpserve.Limits).
	ReadTimeout    time.Duration `yaml:"read_timeout"`
	WriteTimeout   time.Duration `yaml:"write_timeout"`
	IdleTimeout    time.Duration `yaml:"idle_timeout"`
	MaxConnections int           `yaml:"max_connections"`
	// MaxMicroversion caps the microversions offered (for testing clients
	// against an older Placement); see config_api.go.
	MaxMicroversion string `yaml:"max_microversion"`
	// Release is the upstream Placement release whose policy defaults and
	// rules the API follows where releases differ: "15.0.0" (2026.1, the
	// default) or "8.0.0" (2022.2); see config_api.go.
	Release string `yaml:"release"`
	// AllocationCandidates tunes GET /allocation_candidates.
	AllocationCandidates CandidatesConfig `yaml:"allocation_candidates"`
}

// DatabaseConfig configures the store: an SQLite file (the default) or a
// MySQL/MariaDB database named by Connection.
type DatabaseConfig struct {
	// Connection is a database URL as placement.conf's [placement_database]
	// connection: mysql+pymysql://user:pass@host/db?charset=utf8mb4,
	// mysql://…, or sqlite:////abs/path. Empty means the SQLite file Path.
	Connection string `yaml:"connection"`
	// Path is the SQLite file, relative to the working directory unless
	// absolute. Its directory is created if missing.
	Path string `yaml:"path"`
	// BusyTimeout is how long a write waits for another process's lock.
	BusyTimeout time.Duration `yaml:"busy_timeout"`
	// AutoMigrate applies pending schema migrations at start-up.
	AutoMigrate bool `yaml:"auto_migrate"`
	// ChangeFeed is how replicas on a shared database follow each other.
	ChangeFeed ChangeFeedConfig `yaml:"change_feed"`
}

// URL is the database the configuration names: Connection when set,
// else the SQLite file Path.
func (d DatabaseConfig) URL() (*dburl.URL, error) {
	u, err := dbstore.Locate(d.Connection, d.Path)
	if err != nil {
		return nil, fmt.Errorf("database.connection: %w", err)
	}
	return u, nil
}

// dbName is how messages name a database (dbstore.Name): a file by its
// path, a database on a server by its URL without the password.
func dbName(u *dburl.URL) string { return dbstore.Name(u) }

// name is dbName of the configured database, for the start-up log; the
// configuration was validated, so URL does not fail.
func (d DatabaseConfig) name() string {
	u, err := d.URL()
	if err != nil {
		return "?"
	}
	return dbName(u)
}

// LogConfig configures logging.
type LogConfig struct {
	// Level is debug, info, warn or error.
	Level string `yaml:"level"`
	// Format is json (production) or console (development).
	Format string `yaml:"format"`
}

// Defaults. configs/placement-syncd.yaml documents the same values, and a
// test keeps the two equal.
const (
	defaultListen        = "127.0.0.1:8778"
	defaultAuthStrategy  = "noauth2"
	defaultShutdownGrace = 10 * time.Second
	defaultDBPath        = "placement.db"
	defaultBusyTimeout   = 5 * time.Second
	defaultLogLevel      = "info"
	defaultLogFormat     = "json"
)

// DefaultConfig returns the configuration used when no file is given; a
// file is decoded on top of it, so absent keys keep these values.
func DefaultConfig() Config {
	return Config{
		API: APIConfig{
			Listen:               defaultListen,
			AuthStrategy:         defaultAuthStrategy,
			ShutdownGrace:        defaultShutdownGrace,
			ReadTimeout:          httpserve.DefaultLimits().ReadTimeout,
			WriteTimeout:         httpserve.DefaultLimits().WriteTimeout,
			IdleTimeout:          httpserve.DefaultLimits().IdleTimeout,
			MaxConnections:       httpserve.DefaultLimits().MaxConnections,
			AllocationCandidates: defaultCandidatesConfig(),
			MaxMicroversion:      defaultMaxMicroversion,
			Release:              release.Default.String(),
		},
		Database: DatabaseConfig{
			Path:        defaultDBPath,
			BusyTimeout: defaultBusyTimeout,
			AutoMigrate: true,
			ChangeFeed:  defaultChangeFeedConfig(),
		},
		Log:   LogConfig{Level: defaultLogLevel, Format: defaultLogFormat},
		Agent: defaultAgentConfig(),

		KeystoneAuthToken: defaultKeystoneAuthToken(),
		CORS:              defaultCORS(),
		Reconciler:        defaultReconcilerConfig(),
		Metrics:           defaultMetricsConfig(),
	}
}

// fieldError is a bad value at a dotted key path ("api.listen").
type fieldError struct {
	Key string
	Msg string
}

func (e *fieldError) Error() string { return e.Key + ": " + e.Msg }

// Validate checks every value, returning one fieldError per bad key
// (joined with errors.Join) so an operator sees all problems at once.
func (c *Config) Validate() error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, &fieldError{Key: key, Msg: fmt.Sprintf(format, args...)})
	}
	if err := checkListen(c.API.Listen); err != nil {
		bad("api.listen", "invalid address %q: %v", c.API.Listen, err)
	}
	errs = append(errs, validateAuth(c)...)
	if c.API.ShutdownGrace < 0 {
		bad("api.shutdown_grace", "must not be negative, got %s", c.API.ShutdownGrace)
	}
	for key, d := range map[string]time.Duration{"api.read_timeout": c.API.ReadTimeout, "api.write_timeout": c.API.WriteTimeout, "api.idle_timeout": c.API.IdleTimeout} {
		if d <= 0 {
			bad(key, "must be positive, got %s", d)
		}
	}
	if c.API.MaxConnections < 1 {
		bad("api.max_connections", "must be at least 1, got %d", c.API.MaxConnections)
	}
	checkMaxMicroversion(c.API.MaxMicroversion, bad)
	if _, err := release.Parse(c.API.Release); err != nil {
		bad("api.release", "%v", err)
	}
	errs = append(errs, c.API.AllocationCandidates.validate("api.allocation_candidates")...)
	if c.Database.Connection != "" {
		if _, err := dbstore.Locate(c.Database.Connection, c.Database.Path); err != nil {
			bad("database.connection", "%v", err)
		}
	} else if c.Database.Path == "" {
		bad("database.path", "must not be empty")
	}
	if c.Database.BusyTimeout <= 0 {
		bad("database.busy_timeout", "must be positive, got %s", c.Database.BusyTimeout)
	}
	if !slices.Contains(logLevels, c.Log.Level) {
		bad("log.level", "invalid level %q (one of %s)", c.Log.Level, strings.Join(logLevels, ", "))
	}
	if !slices.Contains(logFormats, c.Log.Format) {
		bad("log.format", "invalid format %q (one of %s)", c.Log.Format, strings.Join(logFormats, ", "))
	}
	validateAgent(c.Agent, bad)
	validateReconciler(c.Reconciler, bad)
	validateReplicas(c, bad)
	validateSafety(c, bad)
	c.Metrics.validate(c, bad)
	return errors.Join(errs...)
}

var (
	logLevels  = []string{"debug", "info", "warn", "error"}
	logFormats = []string{"json", "console"}
)

// checkListen accepts host:port with a numeric port; an empty host means
// every interface.
func checkListen(addr string) error {
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

// override is a value set on the command line, which wins over the file.
type override struct {
	Key  string // dotted config key, e.g. "api.listen"
	Flag string // e.g. "--listen"
	Set  func(*Config)
}

// loadConfig reads path (none: defaults only), applies the overrides and
// validates. Errors name the file and line, or the flag, of each bad key.
func loadConfig(path string, overrides []override) (Config, error) {
	return loadConfigOn(DefaultConfig(), path, overrides)
}

// loadConfigOn is loadConfig over base instead of the defaults (serve
// --placement-conf: what placement.conf says, which the YAML overrides).
func loadConfigOn(base Config, path string, overrides []override) (Config, error) {
	cfg := base
	var doc *yaml.Node
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return cfg, fmt.Errorf("read config: %w", err)
		}
		if doc, err = decodeConfig(path, data, &cfg); err != nil {
			return cfg, err
		}
	}
	flagOf := map[string]string{}
	for _, o := range overrides {
		o.Set(&cfg)
		flagOf[o.Key] = o.Flag
	}
	if err := cfg.Validate(); err != nil {
		var errs []error
		for _, e := range unjoin(err) {
			var fe *fieldError
			switch {
			case !errors.As(e, &fe):
				errs = append(errs, e)
			case flagOf[fe.Key] != "":
				errs = append(errs, fmt.Errorf("flag %s: %s", flagOf[fe.Key], fe.Msg))
			default:
				if n := findKey(doc, strings.Split(fe.Key, ".")); n != nil {
					errs = append(errs, fmt.Errorf("%s:%d: %w", path, n.Line, fe))
				} else {
					errs = append(errs, e)
				}
			}
		}
		return cfg, errors.Join(errs...)
	}
	return cfg, nil
}

// unjoin splits an errors.Join result back into its parts.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// decodeConfig decodes data strictly into cfg, which holds the defaults.
// It also returns the node tree, used to put line numbers on errors.
func decodeConfig(path string, data []byte, cfg *Config) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, syntaxError(path, err)
	}
	if doc.Kind == 0 { // empty file or only comments: all defaults
		return nil, nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		if root.Tag == "!!null" {
			return nil, nil
		}
		return nil, fmt.Errorf("%s:%d: the top level must be a mapping of sections (api, database, log)", path, root.Line)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	err := dec.Decode(cfg)
	if err == nil {
		var extra yaml.Node
		if dec.Decode(&extra) != io.EOF {
			return nil, fmt.Errorf("%s:%d: only one YAML document is allowed", path, extra.Line)
		}
		return root, nil
	}
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return nil, syntaxError(path, err)
	}
	errs := make([]error, 0, len(te.Errors))
	for _, msg := range te.Errors {
		errs = append(errs, describeTypeError(path, root, msg))
	}
	return nil, errors.Join(errs...)
}

var yamlLineRE = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// syntaxError turns "yaml: line 3: msg" into "file:3: msg".
func syntaxError(path string, err error) error {
	if m := yamlLineRE.FindStringSubmatch(err.Error()); m != nil {
		return fmt.Errorf("%s:%s: %s", path, m[1], m[2])
	}
	return fmt.Errorf("%s: %s", path, strings.TrimPrefix(err.Error(), "yaml: "))
}

var (
	unknownFieldRE = regexp.MustCompile(`^field (\S+) not found in type`)
	badValueRE     = regexp.MustCompile(`^cannot unmarshal (!!\w+)(?: .*)? into (\S+)$`)
	duplicateRE    = regexp.MustCompile(`^mapping key "((?:[^"\\]|\\.)*)" already defined at line (\d+)$`)
)

// describeTypeError rewrites one of yaml.v3's per-line decode messages in
// the operator's terms: the file, the line, the dotted key, and what was
// expected there.
func describeTypeError(path string, root *yaml.Node, msg string) error {
	m := yamlLineRE.FindStringSubmatch(msg)
	if m == nil {
		return fmt.Errorf("%s: %s", path, msg)
	}
	line, _ := strconv.Atoi(m[1])
	rest := m[2]
	if u := unknownFieldRE.FindStringSubmatch(rest); u != nil {
		section, _ := findKeyAt(root, nil, line, u[1])
		return unknownKeyError(path, line, u[1], section)
	}
	if d := duplicateRE.FindStringSubmatch(rest); d != nil {
		key, _ := strconv.Unquote(`"` + d[1] + `"`)
		section, _ := findKeyAt(root, nil, line, key)
		return fmt.Errorf("%s:%d: duplicate key %q%s (first at line %s)", path, line, key, inSection(section), d[2])
	}
	if b := badValueRE.FindStringSubmatch(rest); b != nil {
		if key, val := findValueAt(root, nil, line, b[1]); key != nil {
			return fmt.Errorf("%s:%d: %s: invalid value %s: expected %s", path, line, strings.Join(key, "."), describeNode(val), expected(b[2]))
		}
	}
	return fmt.Errorf("%s:%d: %s", path, line, rest)
}

func unknownKeyError(path string, line int, key string, section []string) error {
	known := knownKeys(section)
	hint := ""
	if len(known) > 0 {
		hint = " (known: " + strings.Join(known, ", ") + ")"
	}
	return fmt.Errorf("%s:%d: unknown key %q%s%s", path, line, key, inSection(section), hint)
}

func inSection(section []string) string {
	if len(section) == 0 {
		return " at the top level"
	}
	return fmt.Sprintf(" in section %q", strings.Join(section, "."))
}

// knownKeys lists the YAML keys of the struct at the dotted path section.
func knownKeys(section []string) []string {
	t := reflect.TypeFor[Config]()
	for _, name := range section {
		f, ok := fieldByTag(t, name)
		if !ok || f.Type.Kind() != reflect.Struct {
			return nil
		}
		t = f.Type
	}
	var keys []string
	for i := range t.NumField() {
		if tag := yamlName(t.Field(i)); tag != "" {
			keys = append(keys, tag)
		}
	}
	return keys
}

func fieldByTag(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		if yamlName(t.Field(i)) == name {
			return t.Field(i), true
		}
	}
	return reflect.StructField{}, false
}

func yamlName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	return name
}

// expected names, for an operator, what a Go type accepts.
func expected(goType string) string {
	switch goType {
	case "time.Duration":
		return `a duration such as "10s" or "1m30s"`
	case "bool":
		return "true or false"
	case "string":
		return "a string"
	case "int", "int64", "int32", "uint", "uint64", "uint32":
		return "an integer"
	}
	if strings.HasPrefix(goType, "main.") {
		return "a mapping of keys"
	}
	return goType
}

func describeNode(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "(a mapping)"
	case yaml.SequenceNode:
		return "(a list)"
	}
	return strconv.Quote(n.Value)
}

// findKey returns the value node at the dotted path in a mapping tree;
// a number indexes a list ("reconciler.nova.cell_databases.1.dsn").
func findKey(n *yaml.Node, path []string) *yaml.Node {
	for _, name := range path {
		if i, err := strconv.Atoi(name); err == nil && n != nil && n.Kind == yaml.SequenceNode {
			if i < 0 || i >= len(n.Content) {
				return nil
			}
			n = n.Content[i]
			continue
		}
		if n == nil || n.Kind != yaml.MappingNode {
			return nil
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == name {
				next = n.Content[i+1]
			}
		}
		n = next
	}
	return n
}

// findKeyAt finds the mapping that has key on line and returns its path.
func findKeyAt(n *yaml.Node, path []string, line int, key string) ([]string, bool) {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil, false
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Line == line && k.Value == key {
			return path, true
		}
		if p, ok := findKeyAt(v, append(slices.Clone(path), k.Value), line, key); ok {
			return p, true
		}
	}
	return nil, false
}

// findValueAt finds the key whose value of the given YAML tag kind
// (!!map, !!seq, or a scalar tag) starts on line.
func findValueAt(n *yaml.Node, path []string, line int, tag string) ([]string, *yaml.Node) {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil, nil
	}
	want := yaml.ScalarNode
	switch tag {
	case "!!map":
		want = yaml.MappingNode
	case "!!seq":
		want = yaml.SequenceNode
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		p := append(slices.Clone(path), k.Value)
		if v.Line == line && v.Kind == want {
			return p, v
		}
		if kp, kv := findValueAt(v, p, line, tag); kp != nil {
			return kp, kv
		}
	}
	return nil, nil
}
