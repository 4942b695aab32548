package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
	"github.com/placement-syncd/placement-syncd/placementsrv/store/sqlrows"
)

// Load reads every table, rows with an id in id order. The tables are
// read in parallel over a few extra connections (SQLite's WAL lets readers
// run side by side), which halves start-up at 100k hosts on two cores;
// the pool is back to its one connection when Load returns. Load runs
// before the first write (the ledger loads, then writes), so the tables
// it reads together are one committed state.
func (b *Backend) Load(ctx context.Context) (*store.Records, error) {
	r := &store.Records{}
	b.db.SetMaxOpenConns(loadConns)
	defer b.db.SetMaxOpenConns(1)
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(loadConns)
	// Largest tables first, so that they overlap the most. Allocations
	// are the largest by far: read in two halves of their ids side by
	// side, each into its part of one slice.
	split, err := b.splitAllocations(ctx)
	if err != nil {
		return nil, err
	}
	for i := range split.parts {
		g.Go(func() (err error) {
			pt := &split.parts[i]
			pt.rows, err = queryInto(ctx, b.db, sqlrows.LoadAllocations, decodeAllocation, pt.rows, pt.from, pt.to)
			return
		})
	}
	goRows(g, ctx, b.db, &r.Consumers, sqlrows.LoadConsumers, decodeConsumer)
	goRows(g, ctx, b.db, &r.ProviderTraits, sqlrows.LoadProviderTraits, decodeProviderTrait)
	goRows(g, ctx, b.db, &r.Inventories, sqlrows.LoadInventories, decodeInventory)
	goRows(g, ctx, b.db, &r.Providers, sqlrows.LoadProviders, decodeProvider)
	goRows(g, ctx, b.db, &r.ProviderAggregates, sqlrows.LoadProviderAggregates, decodeProviderAggregate)
	g.Go(func() error { return b.loadSmall(ctx, r) })
	if err := g.Wait(); err != nil {
		return nil, err
	}
	r.Allocations = split.join()
	return r, nil
}

// allocationSplit is the allocations read in two parts by id, into one
// slice sized by their count.
type allocationSplit struct {
	all   []store.AllocationRow
	first int // rows counted in the first part
	parts [2]struct {
		from, to int64 // ids in (from, to]
		rows     []store.AllocationRow
	}
}

func (b *Backend) splitAllocations(ctx context.Context) (*allocationSplit, error) {
	var last, total, first int
	err := b.db.QueryRowContext(ctx, `WITH m AS (SELECT ifnull(max(id), 0) AS last FROM allocations)
		SELECT last, (SELECT count(*) FROM allocations), (SELECT count(*) FROM allocations WHERE id <= last / 2) FROM m`).
		Scan(&last, &total, &first)
	if err != nil {
		return nil, fmt.Errorf("count allocations: %w", err)
	}
	s := &allocationSplit{all: make([]store.AllocationRow, total), first: first}
	s.parts[0].from, s.parts[0].to, s.parts[0].rows = 0, int64(last/2), s.all[:0:first]
	s.parts[1].from, s.parts[1].to, s.parts[1].rows = int64(last/2), int64(last), s.all[first:first:total]
	return s, nil
}

// join returns the rows of both parts in id order: the slice they were
// read into when each filled its share exactly (a part that outgrew its
// share was moved, so it is longer), a copy otherwise (only a write during
// Load could make the counts wrong).
func (s *allocationSplit) join() []store.AllocationRow {
	a, b := s.parts[0].rows, s.parts[1].rows
	if len(a)+len(b) == 0 {
		return nil // as the contract's other stores give for no rows
	}
	if len(a) == s.first && len(b) == len(s.all)-s.first {
		return s.all
	}
	return append(a[:len(a):len(a)], b...)
}

// loadConns is how many connections Load reads with.
const loadConns = 4

// loadSmall reads the tables that hold names rather than the cloud.
func (b *Backend) loadSmall(ctx context.Context, r *store.Records) error {
	var err error
	if r.ResourceClasses, err = queryRows(ctx, b.db, sqlrows.LoadClasses, decodeClass); err != nil {
		return err
	}
	if r.Traits, err = queryRows(ctx, b.db, sqlrows.LoadTraits, decodeTrait); err != nil {
		return err
	}
	if r.Aggregates, err = queryRows(ctx, b.db, sqlrows.LoadAggregates, decodeAggregate); err != nil {
		return err
	}
	if r.Projects, err = queryRows(ctx, b.db, sqlrows.LoadProjects, decodeExternalID); err != nil {
		return err
	}
	if r.Users, err = queryRows(ctx, b.db, sqlrows.LoadUsers, decodeExternalID); err != nil {
		return err
	}
	r.ConsumerTypes, err = queryRows(ctx, b.db, sqlrows.LoadConsumerTypes, decodeConsumerType)
	return err
}

// goRows reads a whole table into *dst with queryRows, on g.
func goRows[T any](g *errgroup.Group, ctx context.Context, db *sql.DB, dst *[]T, query string, decode func(*rowDecoder, *T)) {
	g.Go(func() (err error) {
		*dst, err = queryRows(ctx, db, query, decode)
		return err
	})
}

// queryRows runs query, which reads one whole table, and decodes each row
// into a T. The rows are counted first, so that the slice they go into is
// allocated once: growing it by doubling copied gigabytes and was a fifth
// of loading 100k hosts. Nothing writes during Load, so the count is
// exact; were it not, it would only be a hint.
func queryRows[T any](ctx context.Context, db *sql.DB, query string, decode func(*rowDecoder, *T)) ([]T, error) {
	_, from, ok := strings.Cut(query, " FROM ")
	if !ok {
		return nil, fmt.Errorf("%s: no table to count", query)
	}
	table, _, _ := strings.Cut(from, " ")
	var n int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&n); err != nil {
		return nil, fmt.Errorf("count %s: %w", table, err)
	}
	var dst []T // nil for an empty table, as the contract's other stores give
	if n > 0 {
		dst = make([]T, 0, n)
	}
	return queryInto(ctx, db, query, decode, dst)
}

// queryInto runs query with args and appends each row, decoded into a T,
// to dst. It reads the driver's values directly rather than through
// database/sql's Scan, whose conversions were a third of loading 100k
// hosts.
func queryInto[T any](ctx context.Context, db *sql.DB, query string, decode func(*rowDecoder, *T), dst []T, args ...int64) ([]T, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", query, err)
	}
	defer conn.Close()
	params := make([]driver.NamedValue, len(args))
	for i, a := range args {
		params[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
	}
	err = conn.Raw(func(dc any) error {
		q, ok := dc.(driver.QueryerContext)
		if !ok {
			return errors.New("the driver cannot run queries")
		}
		rows, err := q.QueryContext(ctx, query, params)
		if err != nil {
			return err
		}
		defer rows.Close()
		d := &rowDecoder{vals: make([]driver.Value, len(rows.Columns()))}
		for {
			if err := rows.Next(d.vals); errors.Is(err, io.EOF) {
				return nil
			} else if err != nil {
				return err
			}
			var x T
			d.col = 0
			decode(d, &x)
			if d.err != nil {
				return d.err
			}
			dst = append(dst, x)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", query, err)
	}
	return dst, nil
}

// rowDecoder hands out one row's columns in order, converted; the first
// mismatch sticks in err.
type rowDecoder struct {
	vals []driver.Value
	col  int
	err  error
}

func (d *rowDecoder) next() driver.Value {
	v := d.vals[d.col]
	d.col++
	return v
}

func (d *rowDecoder) fail(v driver.Value, want string) {
	if d.err == nil {
		d.err = fmt.Errorf("column %d: %T is not %s", d.col-1, v, want)
	}
}

// int is an INTEGER column; NULL is 0.
func (d *rowDecoder) int() int64 {
	switch v := d.next(); v := v.(type) {
	case int64:
		return v
	case nil:
		return 0
	default:
		d.fail(v, "an integer")
		return 0
	}
}

func (d *rowDecoder) float() float64 {
	switch v := d.next(); v := v.(type) {
	case float64:
		return v
	case int64:
		return float64(v)
	default:
		d.fail(v, "a number")
		return 0
	}
}

func (d *rowDecoder) text() string {
	switch v := d.next(); v := v.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	default:
		d.fail(v, "text")
		return ""
	}
}

// time is a timestamp in Unix nanoseconds; NULL is the zero time.
func (d *rowDecoder) time() time.Time {
	if d.vals[d.col] == nil {
		d.col++
		return time.Time{}
	}
	return time.Unix(0, d.int()).UTC()
}

func decodeClass(d *rowDecoder, x *store.ResourceClassRow) {
	x.ID, x.Name, x.CreatedAt, x.UpdatedAt = d.int(), d.text(), d.time(), d.time()
}

func decodeTrait(d *rowDecoder, x *store.TraitRow) {
	x.ID, x.Name, x.CreatedAt, x.UpdatedAt = d.int(), d.text(), d.time(), d.time()
}

func decodeProvider(d *rowDecoder, x *store.ProviderRow) {
	x.ID, x.UUID, x.Name, x.Generation = d.int(), d.text(), d.text(), d.int()
	x.ParentID, x.RootID, x.CreatedAt, x.UpdatedAt = d.int(), d.int(), d.time(), d.time()
}

func decodeInventory(d *rowDecoder, x *store.InventoryRow) {
	x.ProviderID, x.ClassID, x.Total, x.Reserved = d.int(), d.int(), d.int(), d.int()
	x.MinUnit, x.MaxUnit, x.StepSize, x.AllocationRatio = d.int(), d.int(), d.int(), d.float()
	x.CreatedAt, x.UpdatedAt = d.time(), d.time()
}

func decodeProviderTrait(d *rowDecoder, x *store.ProviderTraitRow) {
	x.ProviderID, x.TraitID = d.int(), d.int()
}

func decodeAggregate(d *rowDecoder, x *store.AggregateRow) {
	x.ID, x.UUID = d.int(), d.text()
}

func decodeProviderAggregate(d *rowDecoder, x *store.ProviderAggregateRow) {
	x.ProviderID, x.AggregateID = d.int(), d.int()
}

func decodeExternalID(d *rowDecoder, x *store.ExternalIDRow) {
	x.ID, x.ExternalID = d.int(), d.text()
}

func decodeConsumerType(d *rowDecoder, x *store.ConsumerTypeRow) {
	x.ID, x.Name, x.CreatedAt = d.int(), d.text(), d.time()
}

func decodeConsumer(d *rowDecoder, x *store.ConsumerRow) {
	x.ID, x.UUID, x.ProjectID, x.UserID = d.int(), d.text(), d.int(), d.int()
	x.ConsumerTypeID, x.Generation, x.CreatedAt, x.UpdatedAt = d.int(), d.int(), d.time(), d.time()
}

func decodeAllocation(d *rowDecoder, x *store.AllocationRow) {
	x.ID, x.ProviderID, x.ConsumerID, x.ClassID = d.int(), d.int(), d.int(), d.int()
	x.Used, x.CreatedAt, x.UpdatedAt = d.int(), d.time(), d.time()
}
