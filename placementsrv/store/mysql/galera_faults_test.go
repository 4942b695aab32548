package mysql_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/placementsrv/ledger"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
	"github.com/placement-syncd/placement-syncd/testkit/mariadbtest"
)

// galeraFaultCapacity is small against what the claims try to hold, so
// that they run into it and over-allocation could happen.
const galeraFaultCapacity = 40

// galeraFaultLog is what became of every consumer the writers claimed
// for: acknowledged (true), deleted with acknowledgement (false), or of
// unknown outcome (absent, counted).
type galeraFaultLog struct {
	mu      sync.Mutex
	present map[string]bool
	held    []string    // acknowledged claims not being deleted, oldest first
	owed    int         // deletes owed for refusals
	done    []time.Time // when each acknowledged claim or delete was
	acked   int
	refused int // claims refused for capacity
	unknown int
	errs    map[string]int // unexpected errors, by text, for the log
}

// TestGaleraFaults claims through a replica (ledger) on each node of a
// 3-node Galera cluster against a capacity, kills node 3 with SIGKILL
// under the claims, and lets the replicas on nodes 1 and 2 claim on. No
// acknowledged claim is lost, the surviving nodes hold the same
// allocations and at most the capacity, and both surviving replicas
// converge with them.
func TestGaleraFaults(t *testing.T) {
	ctx := context.Background()
	c := mariadbtest.StartGalera(t, 3)
	db := c.NewDatabase(t)
	ls := make([]*ledger.Ledger, len(c.Nodes))
	for i, node := range c.Nodes {
		l, err := ledger.New(ctx, galeraOpen(t, node, db), ledger.Options{})
		if err != nil {
			t.Fatalf("replica on node %d: %v", i+1, err)
		}
		defer l.Close()
		ls[i] = l
	}
	if _, err := ls[0].CreateProvider(ctx, store.NewProvider{UUID: rpA, Name: "rp"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ls[0].SetInventories(ctx, rpA, 0, []store.Inventory{{ResourceClass: "VCPU",
		InventoryAmounts: store.InventoryAmounts{Total: galeraFaultCapacity, MinUnit: 1, MaxUnit: 2, StepSize: 1, AllocationRatio: 1}}}); err != nil {
		t.Fatal(err)
	}
	g := &galeraFaultLog{present: map[string]bool{}, errs: map[string]int{}}
	var nodeDown sync.RWMutex // held for writing while node 3 is killed
	var killed bool
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 9 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; ; k++ {
				select {
				case <-stop:
					return
				default:
				}
				nodeDown.RLock()
				l := ls[w%3]
				if killed && w%3 == 2 {
					l = ls[k%2] // the client's load balancer drops node 3
				}
				nodeDown.RUnlock()
				g.step(ctx, l, fmt.Sprintf("cccccccc-0000-4000-8000-%06d%06d", w, k))
			}
		}()
	}
	g.waitAcked(t, 60)
	nodeDown.Lock()
	start := time.Now()
	if err := c.Nodes[2].Kill(); err != nil {
		t.Fatal(err)
	}
	killed = true
	nodeDown.Unlock()
	g.waitAcked(t, 60)
	close(stop)
	wg.Wait()
	galeraFaultsCheck(t, g, c.Nodes[:2], ls[:2], db, g.longestGap(start))
}

// step claims 2 VCPU for consumer, or deletes the oldest claim when
// the held claims fill the capacity or a refusal owes a delete.
func (g *galeraFaultLog) step(ctx context.Context, l *ledger.Ledger, consumer string) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if victim := g.victim(); victim != "" {
		err := l.DeleteConsumerAllocations(ctx, victim)
		g.settle(victim, err, false)
		return
	}
	err := l.ReplaceAllocations(ctx, []store.ConsumerAllocations{{ConsumerUUID: consumer, ProjectID: "p", UserID: "u",
		ConsumerType: "INSTANCE", CheckGeneration: true,
		Allocations: []store.Allocation{{ProviderUUID: rpA, ResourceClass: "VCPU", Used: 2}}}})
	g.settle(consumer, err, true)
}

// victim takes the oldest held claim to delete, "" to claim instead.
func (g *galeraFaultLog) victim() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.held) == 0 || g.owed == 0 && len(g.held) < galeraFaultCapacity/2 {
		return ""
	}
	g.owed = max(0, g.owed-1)
	v := g.held[0]
	g.held = g.held[1:]
	return v
}

// settle records the outcome of a claim (claim true) or a delete: a
// refusal or a conflict changed nothing, any other error leaves the
// outcome unknown.
func (g *galeraFaultLog) settle(consumer string, err error, claim bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case err == nil:
		g.done = append(g.done, time.Now())
		g.present[consumer] = claim
		if claim {
			g.acked++
			g.held = append(g.held, consumer)
		}
	case errors.Is(err, store.ErrCapacityExceeded):
		g.owed++
		g.refused++
	case errors.Is(err, store.ErrConcurrentUpdate):
		if !claim {
			g.held = append(g.held, consumer) // still held: delete it later
		}
	default:
		if _, known := g.present[consumer]; known || claim {
			delete(g.present, consumer)
			g.unknown++
		}
		g.errs[err.Error()]++
	}
}

// longestGap is the longest time after from without an acknowledged
// write: how long the surviving nodes stalled while the cluster noticed
// the killed node.
func (g *galeraFaultLog) longestGap(from time.Time) time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	var gap time.Duration
	last := from
	for _, d := range g.done {
		if d.After(last) {
			gap, last = max(gap, d.Sub(last)), d
		}
	}
	return gap
}

func (g *galeraFaultLog) waitAcked(t *testing.T, n int) {
	t.Helper()
	g.mu.Lock()
	want := g.acked + n
	g.mu.Unlock()
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		g.mu.Lock()
		acked, errs := g.acked, maps.Clone(g.errs)
		g.mu.Unlock()
		if acked >= want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d claims acknowledged, waiting for %d; errors %v", acked, want, errs)
		}
	}
}

// galeraFaultsCheck compares what was acknowledged with the allocations
// of the surviving nodes and of their replicas.
func galeraFaultsCheck(t *testing.T, g *galeraFaultLog, nodes []*mariadbtest.Server, ls []*ledger.Ledger, db string, stall time.Duration) {
	views := make([]map[string]int64, 0, 2*len(nodes))
	for _, node := range nodes {
		v, err := galeraNodeView(node, db)
		if err != nil {
			t.Fatal(err)
		}
		views = append(views, v)
	}
	diverged := 0
	for i, l := range ls {
		v, err := galeraReplicaView(l)
		if err != nil {
			t.Fatalf("replica on node %d: %v", i+1, err)
		}
		if !maps.Equal(v, views[0]) {
			diverged++
			t.Errorf("replica on node %d holds %d allocations, node 1 %d", i+1, len(v), len(views[0]))
		}
		views = append(views, v)
	}
	if !maps.Equal(views[0], views[1]) {
		t.Errorf("node 1 holds %d allocations, node 2 %d", len(views[0]), len(views[1]))
	}
	lost, over := 0, int64(0)
	for consumer, present := range g.present {
		for i, v := range views {
			if _, ok := v[consumer]; ok != present {
				lost++
				t.Errorf("consumer %s: acknowledged present %t, view %d (nodes 1, 2, their replicas) disagrees", consumer, present, i)
				break
			}
		}
	}
	for i, v := range views[:2] {
		var used int64
		for _, u := range v {
			used += u
		}
		if used > galeraFaultCapacity {
			over = max(over, used-galeraFaultCapacity)
			t.Errorf("node %d: %d VCPU allocated of %d", i+1, used, galeraFaultCapacity)
		}
	}
	t.Logf("galera faults: acknowledged=%d refused=%d lost=%d over-allocated=%d diverged=%d unknown=%d stall-after-kill=%.2fs",
		g.acked, g.refused, lost, over, diverged, g.unknown, stall.Seconds())
	t.Logf("errors other than refusals and conflicts: %v", g.errs)
}

// galeraNodeView is consumer → VCPU used on rpA in node's copy of db.
func galeraNodeView(node *mariadbtest.Server, db string) (map[string]int64, error) {
	conn, err := sql.Open("mysql", galeraConfig(node, db).FormatDSN())
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", node.Addr, err)
	}
	defer conn.Close()
	rows, err := conn.Query(`SELECT c.uuid, SUM(a.used) FROM allocations a JOIN consumers c ON c.id = a.consumer_id
		JOIN resource_providers rp ON rp.id = a.resource_provider_id WHERE rp.uuid = ? GROUP BY c.uuid`, rpA)
	if err != nil {
		return nil, fmt.Errorf("allocations on %s: %w", node.Addr, err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var c string
		var used int64
		if err := rows.Scan(&c, &used); err != nil {
			return nil, fmt.Errorf("allocations on %s: %w", node.Addr, err)
		}
		out[c] = used
	}
	return out, rows.Err()
}

// galeraReplicaView is consumer → VCPU used on rpA in l's memory, after
// it caught up.
func galeraReplicaView(l *ledger.Ledger) (map[string]int64, error) {
	if err := l.Poll(context.Background(), time.Minute); err != nil {
		return nil, fmt.Errorf("catch up: %w", err)
	}
	_, held, err := l.ProviderAllocations(context.Background(), rpA)
	if err != nil {
		return nil, fmt.Errorf("allocations: %w", err)
	}
	out := map[string]int64{}
	for _, h := range held {
		for _, a := range h.Allocations {
			out[h.Consumer.UUID] += a.Used
		}
	}
	return out, nil
}
