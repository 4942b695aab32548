package reconciler

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"go.uber.org/zap"
)

// SharedRecords keeps records where every replica sharing a database
// sees them (the MySQL backend implements it). With several replicas
// behind a load balancer an agent's heartbeat reaches any one of them,
// while every replica's gate (and the API's OWNER_NOVA pre-filter) must
// count it.
type SharedRecords interface {
	// PutRecord stores value under key, replacing what was there.
	PutRecord(ctx context.Context, key string, value []byte) error
	// Records returns every value stored.
	Records(ctx context.Context) ([][]byte, error)
}

// sharedRefresh is how often a replica reads the others' heartbeats.
const sharedRefresh = 5 * time.Second

// share stores a heartbeat for the other replicas.
func (r *Reconciler) share(rec ServiceRecord) error {
	if r.opts.Shared == nil {
		return nil
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.opts.Shared.PutRecord(ctx, rec.Host+"/"+rec.Binary, b); err != nil {
		return fmt.Errorf("share the heartbeat with the other replicas: %w", err)
	}
	return nil
}

// followShared takes in, every sharedRefresh until ctx ends, the
// heartbeats other replicas received, when newer than this one's.
func (r *Reconciler) followShared(ctx context.Context) {
	if r.opts.Shared == nil {
		return
	}
	t := time.NewTicker(sharedRefresh)
	defer t.Stop()
	for {
		if err := r.takeShared(ctx); err != nil {
			r.log.Warn("read the other replicas' heartbeats", zap.Error(err))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (r *Reconciler) takeShared(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	values, err := r.opts.Shared.Records(ctx)
	if err != nil {
		return err
	}
	have := map[string]time.Time{}
	for _, s := range r.state.Services() {
		have[s.Host+"/"+s.Binary] = s.UpdatedAt
	}
	changed := false
	for _, v := range values {
		var rec ServiceRecord
		if err := json.Unmarshal(v, &rec); err != nil {
			return fmt.Errorf("decode a shared heartbeat: %w", err)
		}
		if t, ok := have[rec.Host+"/"+rec.Binary]; ok && !rec.UpdatedAt.After(t) {
			continue
		}
		if err := r.state.PutService(rec); err != nil {
			return err
		}
		changed = true
	}
	if changed {
		r.refreshGate()
	}
	return nil
}
