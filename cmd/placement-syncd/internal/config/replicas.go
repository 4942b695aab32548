package config

import (
	"time"

	"github.com/placement-syncd/placement-syncd/internal/leader"
	"github.com/placement-syncd/placement-syncd/placementsrv/ledger"
)

// ChangeFeedConfig is database.change_feed: how a replica sharing a
// MySQL or MariaDB database with others follows their writes. SQLite
// (one process) has no feed and ignores it.
type ChangeFeedConfig struct {
	// PollInterval is how often the feed is read; a replica's reads lag
	// another's writes by about this much.
	PollInterval time.Duration `yaml:"poll_interval"`
	// Retention is how long changes stay in the feed; a replica that
	// falls further behind reloads everything.
	Retention time.Duration `yaml:"retention"`
	// ConsistentReads makes every read (but GET /) first check the
	// feed's head and catch up when behind: one indexed read per request
	// for answers that include every write acknowledged before, by any
	// replica. Off, reads answer from memory at once and lag by up to a
	// poll interval.
	ConsistentReads bool `yaml:"consistent_reads"`
	// MaxStaleness is how long after memory was last confirmed with the
	// feed a consistent read that cannot confirm it (the database down)
	// is still answered from memory. Beyond it, and with 0 (the default),
	// such a read answers 503 rather than break the promise above.
	MaxStaleness time.Duration `yaml:"max_staleness"`
}

// LeaderConfig is reconciler.leader: the election of the one replica that
// runs the reconciler's jobs on a shared database.
type LeaderConfig struct {
	// LeaseTTL is how long the leader's lease lasts unrenewed; another
	// replica takes the jobs over within LeaseTTL plus a third of it.
	LeaseTTL time.Duration `yaml:"lease_ttl"`
}

func defaultChangeFeedConfig() ChangeFeedConfig {
	return ChangeFeedConfig{PollInterval: ledger.DefaultPollInterval, Retention: ledger.DefaultRetention, ConsistentReads: true}
}

func defaultLeaderConfig() LeaderConfig { return LeaderConfig{LeaseTTL: leader.DefaultTTL} }

// checkReplicas checks the change feed and leader settings.
func checkReplicas(c *Config, p *problems) {
	if d := c.Database.ChangeFeed.PollInterval; d < time.Millisecond {
		p.bad("database.change_feed.poll_interval", "must be at least 1ms, got %s", d)
	}
	if d := c.Database.ChangeFeed.Retention; d < time.Minute {
		p.bad("database.change_feed.retention", "must be at least 1m, got %s", d)
	}
	if d := c.Database.ChangeFeed.MaxStaleness; d < 0 {
		p.bad("database.change_feed.max_staleness", "must not be negative, got %s", d)
	}
	if d := c.Reconciler.Leader.LeaseTTL; d < 3*time.Second {
		p.bad("reconciler.leader.lease_ttl", "must be at least 3s, got %s", d)
	}
}
