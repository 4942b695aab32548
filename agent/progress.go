package agent

import (
	"sync"
	"time"

	"go.uber.org/zap"
)

// progressEvery is how often a long phase of a pass (the first read of a
// fleet, a large change) logs how far it got.
const progressEvery = 10 * time.Second

// progress logs a long phase's advance: nothing for a phase that ends
// within progressEvery, else a line every progressEvery and one at the
// end. It is safe for concurrent use.
type progress struct {
	log   *zap.Logger
	phase string
	total int
	start time.Time

	mu     sync.Mutex
	done   int
	next   time.Time
	logged bool
}

func newProgress(log *zap.Logger, driver, phase string, total int) *progress {
	now := time.Now()
	return &progress{log: log.With(zap.String("driver", driver)), phase: phase, total: total, start: now, next: now.Add(progressEvery)}
}

// step counts one provider done.
func (p *progress) step() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	if now := time.Now(); now.After(p.next) {
		p.next = now.Add(progressEvery)
		p.logged = true
		p.log.Info("sync progress", zap.String("phase", p.phase), zap.Int("done", p.done), zap.Int("total", p.total),
			zap.Duration("elapsed", now.Sub(p.start).Round(time.Millisecond)))
	}
}

// end logs the phase's total if its progress was logged.
func (p *progress) end() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.logged {
		p.log.Info("sync phase done", zap.String("phase", p.phase), zap.Int("done", p.done), zap.Int("total", p.total),
			zap.Duration("elapsed", time.Since(p.start).Round(time.Millisecond)))
	}
}
