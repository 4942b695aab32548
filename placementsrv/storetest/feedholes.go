package storetest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/placementsrv/ledger"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
	"github.com/placement-syncd/placement-syncd/placementsrv/store/feed"
)

// openChange is a write transaction that took its change id and has not
// committed: a writer paused between its last statement and its commit.
type openChange struct {
	rec *feed.Recorder
	id  int64
}

// beginChange inserts trait name in a transaction of be and appends its
// change, leaving it open.
func beginChange(t *testing.T, ctx context.Context, be store.Backend, name string) *openChange {
	t.Helper()
	tx, err := be.Begin(ctx)
	must(t, err)
	rec := feed.NewRecorder(tx)
	if _, err := rec.InsertTrait(ctx, store.TraitRow{Name: name, CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	payload, err := feed.Encode(rec.Ops())
	must(t, err)
	id, err := tx.(store.FeedTx).AppendChange(ctx, payload)
	must(t, err)
	return &openChange{rec: rec, id: id}
}

func hasTrait(t *testing.T, ctx context.Context, l *ledger.Ledger, name string) bool {
	t.Helper()
	if _, err := l.GetTrait(ctx, name); err == nil {
		return true
	} else if !errors.Is(err, store.ErrNotFound) {
		t.Fatal(err)
	}
	return false
}

// testFeedHoles commits changes out of id order: a reader that saw the
// later one finds the earlier when it commits, however late; a
// tombstone cannot take an id whose writer holds it, and closes one
// whose writer rolled back.
func testFeedHoles(t *testing.T, s Storage) {
	ctx := context.Background()
	ls := openReplicas(t, s, 2)
	reader, writer := ls[0], ls[1]
	reader.SetConsistentReads(true)
	be := s(t)
	defer be.Close()
	f := be.(store.Feed)

	late := beginChange(t, ctx, be, "CUSTOM_LATE")
	if _, _, err := writer.EnsureTrait(ctx, "CUSTOM_EARLY"); err != nil {
		t.Fatal(err)
	}
	must(t, reader.Fresh(ctx))
	if !hasTrait(t, ctx, reader, "CUSTOM_EARLY") || hasTrait(t, ctx, reader, "CUSTOM_LATE") {
		t.Fatal("the reader should hold the committed change and not the open one")
	}
	if closed, err := f.Settle(ctx, 0, []int64{late.id}); err != nil || len(closed) != 0 {
		t.Fatalf("a tombstone took id %d of an open writer: %v (%v)", late.id, closed, err)
	}
	must(t, late.rec.Commit())
	must(t, reader.Fresh(ctx))
	if !hasTrait(t, ctx, reader, "CUSTOM_LATE") {
		t.Fatalf("change %d, committed after a later id was read, never reached the reader", late.id)
	}

	gone := beginChange(t, ctx, be, "CUSTOM_GONE")
	must(t, gone.rec.Rollback())
	if _, _, err := writer.EnsureTrait(ctx, "CUSTOM_AFTER"); err != nil {
		t.Fatal(err)
	}
	poll(t, reader)
	closed, err := f.Settle(ctx, 0, []int64{gone.id})
	if err != nil || !slices.Equal(closed, []int64{gone.id}) {
		t.Fatalf("settling rolled-back id %d closed %v (%v)", gone.id, closed, err)
	}
	chs, _, err := f.Changes(ctx, gone.id-1, nil, 1)
	if err != nil || len(chs) != 1 || chs[0].ID != gone.id || len(chs[0].Payload) != 0 {
		t.Fatalf("id %d should hold a tombstone: %+v (%v)", gone.id, chs, err)
	}
	poll(t, reader)
	if !hasTrait(t, ctx, reader, "CUSTOM_AFTER") || hasTrait(t, ctx, reader, "CUSTOM_GONE") {
		t.Fatal("the reader should hold the change after the tombstone and not the rolled-back one")
	}
}
