// Package config is placement-syncd's configuration: the YAML file's
// types and defaults, OpenStack Placement's placement.conf mapped onto
// them, the command line's overrides, and one validation. Load is the
// one way to read it; every error names the file and line, or the flag,
// of each bad key. Only the commands import it.
package config

import (
	"fmt"
	"time"

	"github.com/placement-syncd/placement-syncd/internal/dburl"
	"github.com/placement-syncd/placement-syncd/internal/httpserve"
	"github.com/placement-syncd/placement-syncd/placementsrv/dbstore"
	"github.com/placement-syncd/placement-syncd/placementsrv/release"
)

// Config is the whole configuration. The YAML types live here and are
// mapped to each component's options by package assemble; no component
// reads YAML itself. There is deliberately no UnmarshalYAML on these types:
// a custom unmarshaler decodes through yaml.Node, which loses
// KnownFields (go-yaml/yaml#460).
type Config struct {
	API      APIConfig      `yaml:"api"`
	Database DatabaseConfig `yaml:"database"`
	Log      LogConfig      `yaml:"log"`
	Agent    AgentConfig    `yaml:"agent"`
	Metrics  MetricsConfig  `yaml:"metrics"`

	KeystoneAuthToken KeystoneAuthTokenConfig `yaml:"keystone_authtoken"`
	Policy            PolicyConfig            `yaml:"policy"`
	CORS              CORSConfig              `yaml:"cors"`
	// Reconciler is in reconciler.go.
	Reconciler ReconcilerConfig `yaml:"reconciler"`
	// Capacity is in capacity.go.
	Capacity CapacityConfig `yaml:"capacity"`
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
	// safety.go); every start then logs a warning.
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
	// against an older Placement); see api.go.
	MaxMicroversion string `yaml:"max_microversion"`
	// Release is the upstream Placement release whose policy defaults and
	// rules the API follows where releases differ: "15.0.0" (2026.1, the
	// default) or "8.0.0" (2022.2); see api.go.
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

// Default returns the configuration used when no file is given; a
// file is decoded on top of it, so absent keys keep these values.
func Default() Config {
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
		Policy:            PolicyConfig{FileCheck: FileCheckStrict},
		CORS:              defaultCORS(),
		Reconciler:        defaultReconcilerConfig(),
		Metrics:           defaultMetricsConfig(),
		Capacity:          defaultCapacityConfig(),
	}
}

// Error is a configuration that cannot be used as it stands, found once
// loaded: a policy file that does not compile, a driver that refuses its
// section. A command exits 2 on it, as on a bad key.
type Error struct{ Err error }

func (e Error) Error() string { return e.Err.Error() }
func (e Error) Unwrap() error { return e.Err }
