package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/reconciler"
	"github.com/placement-syncd/placement-syncd/testkit/daemontest"
)

// leaderRound is one poll of every replica's /v1/jobs.
type leaderRound struct {
	at time.Time
	// leaders are the replicas that said they lead within fastAnswer of
	// the round's start: two of them lead at once, since a leader steps
	// down a tenth of the lease (300 ms) before another can take over.
	leaders []int
}

const fastAnswer = 250 * time.Millisecond

// leaderWatch polls every replica's assemble.Leadership every 100 ms. A round does
// not wait for the previous one: a stopped replica's answer times out
// without delaying the others'.
type leaderWatch struct {
	addrs  []string
	client *http.Client
	stop   chan struct{}
	done   sync.WaitGroup

	mu     sync.Mutex
	rounds []leaderRound
}

func watchLeaders(addrs []string) *leaderWatch {
	w := &leaderWatch{addrs: addrs, client: &http.Client{Timeout: time.Second}, stop: make(chan struct{})}
	w.done.Add(1)
	go func() {
		defer w.done.Done()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-tick.C:
				w.done.Add(1)
				go func() {
					defer w.done.Done()
					w.round()
				}()
			}
		}
	}()
	return w
}

func (w *leaderWatch) round() {
	at := time.Now()
	lead := make([]bool, len(w.addrs))
	var wg sync.WaitGroup
	for i, a := range w.addrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := w.ask(a)
			lead[i] = err == nil && l && time.Since(at) <= fastAnswer
		}()
	}
	wg.Wait()
	r := leaderRound{at: at}
	for i, l := range lead {
		if l {
			r.leaders = append(r.leaders, i)
		}
	}
	w.mu.Lock()
	w.rounds = append(w.rounds, r)
	w.mu.Unlock()
}

func (w *leaderWatch) ask(addr string) (bool, error) {
	r, err := daemontest.Client{Base: "http://" + addr, HTTP: w.client}.Do(context.Background(), http.MethodGet, "/v1/jobs", nil)
	if err != nil {
		return false, err
	}
	var out struct {
		Leadership reconciler.Leadership `json:"leadership"`
	}
	if err := json.Unmarshal(r.Body, &out); err != nil {
		return false, fmt.Errorf("jobs of %s: %w", addr, err)
	}
	return out.Leadership.Leader, nil
}

// end stops polling and waits for the rounds under way.
func (w *leaderWatch) end() {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	w.done.Wait()
}

// current is the one leader of the latest round.
func (w *leaderWatch) current() (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var last leaderRound
	for _, r := range w.rounds {
		if r.at.After(last.at) {
			last = r
		}
	}
	if len(last.leaders) != 1 {
		return 0, fmt.Errorf("leaders %v in the round of %s", last.leaders, last.at.Format(time.StampMilli))
	}
	return last.leaders[0], nil
}

// takeover is the time from killedAt to the first round in which a
// replica other than old led. A round ends up to a client timeout after
// it began, so the answer waits until every earlier round has ended.
func (w *leaderWatch) takeover(old int, killedAt time.Time) (time.Duration, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var first time.Time
	for _, r := range w.rounds {
		if r.at.After(killedAt) && slices.ContainsFunc(r.leaders, func(i int) bool { return i != old }) &&
			(first.IsZero() || r.at.Before(first)) {
			first = r.at
		}
	}
	if first.IsZero() || time.Since(first) < w.client.Timeout+100*time.Millisecond {
		return 0, fmt.Errorf("no other leader yet (%d rounds)", len(w.rounds))
	}
	return first.Sub(killedAt), nil
}

// most is the most replicas that said they lead in one round.
func (w *leaderWatch) most() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, r := range w.rounds {
		n = max(n, len(r.leaders))
	}
	return n
}

// twoAt describes the first round with more than one leader.
func (w *leaderWatch) twoAt() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, r := range w.rounds {
		if len(r.leaders) > 1 {
			return fmt.Sprintf("replicas %v at %s", r.leaders, r.at.Format(time.StampMilli))
		}
	}
	return "never"
}

// allocView is provider → consumer → VCPU used, and provider → usage.
type allocView struct {
	allocs map[string]map[string]int64
	usages map[string]int64
}

var faultProviders = []string{faultRPA, faultRPB, faultRPC}

func databaseView(db *sql.DB) (allocView, error) {
	v := allocView{allocs: map[string]map[string]int64{}, usages: map[string]int64{}}
	rows, err := db.Query(`SELECT rp.uuid, c.uuid, SUM(a.used) FROM allocations a
		JOIN resource_providers rp ON rp.id = a.resource_provider_id JOIN consumers c ON c.id = a.consumer_id
		GROUP BY rp.uuid, c.uuid`)
	if err != nil {
		return v, fmt.Errorf("read the database's allocations: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var rp, consumer string
		var used int64
		if err := rows.Scan(&rp, &consumer, &used); err != nil {
			return v, fmt.Errorf("read the database's allocations: %w", err)
		}
		if v.allocs[rp] == nil {
			v.allocs[rp] = map[string]int64{}
		}
		v.allocs[rp][consumer] = used
		v.usages[rp] += used
	}
	return v, rows.Err()
}

func (l *faultLog) replicaView(s *daemontest.Daemon) (allocView, error) {
	v := allocView{allocs: map[string]map[string]int64{}, usages: map[string]int64{}}
	for _, rp := range faultProviders {
		var a struct {
			Allocations map[string]struct {
				Resources map[string]int64 `json:"resources"`
			} `json:"allocations"`
		}
		if err := l.getJSON(s, "/resource_providers/"+rp+"/allocations", &a); err != nil {
			return v, err
		}
		v.allocs[rp] = map[string]int64{}
		for c, r := range a.Allocations {
			v.allocs[rp][c] = r.Resources["VCPU"]
		}
		var u struct {
			Usages map[string]int64 `json:"usages"`
		}
		if err := l.getJSON(s, "/resource_providers/"+rp+"/usages", &u); err != nil {
			return v, err
		}
		v.usages[rp] = u.Usages["VCPU"]
	}
	return v, nil
}

func (l *faultLog) getJSON(s *daemontest.Daemon, path string, out any) error {
	r, err := l.api(s).Do(context.Background(), http.MethodGet, path, nil)
	if err != nil {
		return err
	}
	if r.Code != http.StatusOK {
		return fmt.Errorf("GET %s on %s: %d", path, s.URL, r.Code)
	}
	if err := json.Unmarshal(r.Body, out); err != nil {
		return fmt.Errorf("GET %s on %s: %w", path, s.URL, err)
	}
	return nil
}

// same reports how replica view r differs from the database's d, "" when
// it does not.
func same(r, d allocView) string {
	for _, rp := range faultProviders {
		if !maps.Equal(r.allocs[rp], d.allocs[rp]) && len(r.allocs[rp])+len(d.allocs[rp]) > 0 {
			return fmt.Sprintf("provider %s: %d allocations, the database %d", rp, len(r.allocs[rp]), len(d.allocs[rp]))
		}
		if r.usages[rp] != d.usages[rp] {
			return fmt.Sprintf("provider %s: usage %d, the database %d", rp, r.usages[rp], d.usages[rp])
		}
	}
	return ""
}

// faultVerdict is what the end state shows.
type faultVerdict struct {
	acked    int // claims acknowledged
	lost     int // acknowledged claims missing from the database or a replica
	over     int64
	diverged int // replicas that did not converge with the database
	unknown  int // consumers whose last request's outcome is unknown
	errs     []string
}

// verifyFaults waits, up to a deadline, until every replica holds the
// database's allocations, then counts what is lost, over-allocated and
// diverged.
func verifyFaults(t *testing.T, f *faultSet, l *faultLog) faultVerdict {
	t.Helper()
	db := f.sql()
	var d allocView
	diffs := make([]string, f.Len())
	views := make([]allocView, f.Len())
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		var err error
		if d, err = databaseView(db); err != nil {
			t.Fatal(err)
		}
		converged := true
		for i := range f.Len() {
			views[i], err = l.replicaView(f.Get(i))
			if diffs[i] = same(views[i], d); err != nil {
				diffs[i] = err.Error()
			}
			converged = converged && diffs[i] == ""
		}
		if converged || time.Now().After(deadline) {
			break
		}
	}
	v := l.count(d, views)
	for i, diff := range diffs {
		if diff != "" {
			v.diverged++
			v.errs = append(v.errs, fmt.Sprintf("replica %d did not converge with the database: %s", i, diff))
		}
	}
	for _, rp := range faultProviders {
		capacity := int64(faultCapAB)
		if rp == faultRPC {
			capacity = faultCapC
		}
		if d.usages[rp] > capacity {
			v.over += d.usages[rp] - capacity
			v.errs = append(v.errs, fmt.Sprintf("provider %s: %d used of %d in the database", rp, d.usages[rp], capacity))
		}
	}
	return v
}

// count checks every consumer's fate against the database's view d and
// the replicas'.
func (l *faultLog) count(d allocView, views []allocView) faultVerdict {
	l.mu.Lock()
	defer l.mu.Unlock()
	v := faultVerdict{acked: l.acked}
	for consumer, c := range l.consumers {
		switch c.fate {
		case fateUnknown:
			v.unknown++
		case fateDeleted:
			if _, ok := d.allocs[c.rp][consumer]; ok {
				v.errs = append(v.errs, fmt.Sprintf("consumer %s: its delete was acknowledged, the database holds it", consumer))
			}
		case fatePresent:
			where := ""
			if d.allocs[c.rp][consumer] != c.used {
				where = "the database"
			}
			for i, r := range views {
				if r.allocs[c.rp][consumer] != c.used {
					where += fmt.Sprintf(" replica %d", i)
				}
			}
			if where != "" {
				v.lost++
				v.errs = append(v.errs, fmt.Sprintf("consumer %s: its claim of %d on %s was acknowledged, missing from %s", consumer, c.used, c.rp, where))
			}
		}
	}
	return v
}
