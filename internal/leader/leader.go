// Package leader elects one of several replicas through a lease that the
// shared database keeps (a row with a holder and an expiry on the
// database's clock): the holder renews it every third of its time to
// live, another replica takes it once it has expired. A holder that
// cannot renew steps down by its own clock before the lease can expire,
// so two replicas never both believe they lead (clock rates, not clock
// readings, must agree).
package leader

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
)

// Lease is the database's side (the MySQL backend implements it).
type Lease interface {
	// AcquireLease makes holder the holder of name until ttl from now,
	// when it is free, expired or already holder's, and reports whether
	// holder holds it.
	AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (bool, error)
	// ReleaseLease gives name up if holder holds it.
	ReleaseLease(ctx context.Context, name, holder string) error
}

// Options configures an Elector.
type Options struct {
	// Name is the lease's name; Holder this replica's (unique among
	// replicas: host and process id).
	Name, Holder string
	// TTL is how long a lease lasts without renewal; 0 means DefaultTTL.
	// A dead leader's jobs move to another replica within TTL plus one
	// renewal period (TTL/3).
	TTL time.Duration
	// Gauge, when set, is 1 while this replica leads and 0 otherwise.
	Gauge  prometheus.Gauge
	Logger *zap.Logger
}

// DefaultTTL is the lease's time to live unless configured.
const DefaultTTL = 15 * time.Second

// Elector takes part in the election until its Run returns.
type Elector struct {
	lease Lease
	opts  Options

	mu sync.Mutex
	// until is when this replica stops believing it leads unless it
	// renews first (the zero time: it does not lead).
	until time.Time
}

// New returns an elector over lease.
func New(lease Lease, opts Options) *Elector {
	if opts.TTL <= 0 {
		opts.TTL = DefaultTTL
	}
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	return &Elector{lease: lease, opts: opts}
}

// Leader reports whether this replica leads now.
func (e *Elector) Leader() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return time.Now().Before(e.until)
}

// Holder is this replica's name in the lease.
func (e *Elector) Holder() string { return e.opts.Holder }

// Run tries to take or renew the lease every TTL/3 until ctx ends, then
// releases it if held, so a clean shutdown hands over at once.
func (e *Elector) Run(ctx context.Context) error {
	tick := time.NewTicker(e.opts.TTL / 3)
	defer tick.Stop()
	for {
		e.try(ctx)
		select {
		case <-ctx.Done():
			e.stepDown()
			rctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := e.lease.ReleaseLease(rctx, e.opts.Name, e.opts.Holder); err != nil {
				e.opts.Logger.Warn("release leadership", zap.Error(err))
			}
			return nil
		case <-tick.C:
		}
	}
}

// try asks for the lease once. The belief lasts TTL from before the
// request (the database's expiry counts from later), less a margin for
// the two clocks' rates.
func (e *Elector) try(ctx context.Context) {
	start := time.Now()
	cctx, cancel := context.WithTimeout(ctx, e.opts.TTL/3)
	held, err := e.lease.AcquireLease(cctx, e.opts.Name, e.opts.Holder, e.opts.TTL)
	cancel()
	e.mu.Lock()
	was := time.Now().Before(e.until)
	switch {
	case err != nil:
		// Keep leading until the belief runs out: a short database
		// outage need not move the jobs.
		e.opts.Logger.Warn("leadership: lease not renewed", zap.Error(err))
	case held:
		e.until = start.Add(e.opts.TTL - e.opts.TTL/10)
	default:
		e.until = time.Time{}
	}
	now := time.Now().Before(e.until)
	e.mu.Unlock()
	e.report(was, now)
}

func (e *Elector) stepDown() {
	e.mu.Lock()
	was := time.Now().Before(e.until)
	e.until = time.Time{}
	e.mu.Unlock()
	e.report(was, false)
}

func (e *Elector) report(was, now bool) {
	if e.opts.Gauge != nil {
		v := 0.0
		if now {
			v = 1
		}
		e.opts.Gauge.Set(v)
	}
	switch {
	case now && !was:
		e.opts.Logger.Info("leadership taken", zap.String("holder", e.opts.Holder), zap.Duration("ttl", e.opts.TTL))
	case was && !now:
		e.opts.Logger.Info("leadership lost", zap.String("holder", e.opts.Holder))
	}
}
