package placementsrv

import (
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/placement-syncd/placement-syncd/metrics"
)

// unconfirmedLogEvery is the most often an unconfirmed read is logged: a
// database down under load would otherwise log every read.
const unconfirmedLogEvery = time.Second

// The answers of unconfirmed reads, the counter's label values.
const (
	answerStale   = "stale"
	answerRefused = "refused"
)

// unconfirmedRead is one read that Fresh could not confirm.
type unconfirmedRead struct {
	stale       bool // answered from memory; otherwise refused (503)
	route, path string
	method      string
	last        time.Time // LastConfirmed, zero when never
	err         error
}

// unconfirmedReads counts every unconfirmed read by answer and logs them,
// at most one line per unconfirmedLogEvery with the count of those left
// out since the last line.
type unconfirmedReads struct {
	answers *prometheus.CounterVec
	log     *zap.Logger

	mu         sync.Mutex
	logged     time.Time // when the last line was written
	suppressed int       // reads not logged since then
}

func newUnconfirmedReads(reg prometheus.Registerer, log *zap.Logger) (*unconfirmedReads, error) {
	set := metrics.NewSet("store")
	answers := set.CounterVec("feed_unconfirmed_reads_total",
		"Reads that could not confirm with the change feed that memory holds every acknowledged write (the database did not answer), by answer: stale (from memory, within max_staleness) or refused (503).",
		"answer")
	// Both series exist from the start, so that a rate over them does not
	// wait for the first failure.
	answers.WithLabelValues(answerStale)
	answers.WithLabelValues(answerRefused)
	if err := set.Register(reg); err != nil {
		return nil, fmt.Errorf("placementsrv: register unconfirmed reads metric: %w", err)
	}
	return &unconfirmedReads{answers: answers, log: log}, nil
}

// record counts rd and logs it unless a line was written within
// unconfirmedLogEvery.
func (u *unconfirmedReads) record(rd unconfirmedRead) {
	answer := answerRefused
	if rd.stale {
		answer = answerStale
	}
	u.answers.WithLabelValues(answer).Inc()
	now := time.Now()
	u.mu.Lock()
	if now.Sub(u.logged) < unconfirmedLogEvery {
		u.suppressed++
		u.mu.Unlock()
		return
	}
	suppressed := u.suppressed
	u.logged, u.suppressed = now, 0
	u.mu.Unlock()
	u.log.Warn("read not confirmed with the change feed",
		zap.String("answer", answer),
		zap.String("method", rd.method),
		zap.String("route", rd.route),
		zap.String("path", rd.path),
		zap.String("staleness", describeStaleness(rd.last)),
		zap.Int("suppressed", suppressed),
		zap.Error(rd.err))
}

// describeStaleness is the age of memory's last confirmation.
func describeStaleness(last time.Time) string {
	if last.IsZero() {
		return "never confirmed"
	}
	return time.Since(last).Round(time.Millisecond).String()
}
