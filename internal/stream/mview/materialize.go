package mview

import (
	"context"
	"fmt"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/types"
)

// Materialize writes its input into the view's table with "overwrite"
// conflict handling and emits the table's actual changes downstream (see
// doc.go for the rules).
type Materialize struct {
	input     stream.Executor
	table     *storage.StateTable
	rows      *rowStore
	schema    []types.Type
	chunkSize int
	out       *types.Builder
	// queue holds output chunks of the last input chunk not yet returned;
	// it is drained before the next input message is pulled, so it never
	// holds more than about twice one input chunk.
	queue stream.ChunkQueue
	// counting: the table keeps its per-vnode row counts (SHOW JOBS
	// reads them as the total a backfill of this table scans).
	counting bool
	// check reports inconsistent input changes (a view's materialize only).
	check consistency
	// fresh: plain inserts carry unused keys (plan.Materialize.FreshInserts).
	fresh bool
	// trusted: a view's inserts, or a checked table's, are of keys it does
	// not hold, so they are written unread (stream.Env.CheckInserts off),
	// and a bulk of them kept as fresh runs (applyTrustedRun). A table's
	// writers read its latest state through the store's tail and committed
	// state, never this materialize's uncommitted writes.
	trusted bool
	// overwrites: a table's update pairs, which its writers read under
	// its lock, may go to the table as fresh overwrites (applyPairRun);
	// not a view's, whose pairs (an aggregate's) hit the same keys many
	// times an epoch.
	overwrites bool
	// downstream says whether anything reads the output (stream.FreshRows
	// are decoded only then).
	downstream *stream.Downstream
	// loading reads the rows of a bulk load's file that this actor emits
	// before its next input message (materialize_loaded.go).
	loading *loadedOutput
}

func newMaterialize(input stream.Executor, table *storage.StateTable, t plan.Table, chunkSize, cacheEntries int) *Materialize {
	return &Materialize{
		input:     input,
		table:     table,
		rows:      newRowStore(table, t, cacheEntries),
		schema:    input.Schema(),
		chunkSize: chunkSize,
		out:       types.NewBuilder(input.Schema(), chunkSize),
	}
}

// Schema returns the view's column types.
func (m *Materialize) Schema() []types.Type { return m.schema }

// Next returns the next output chunk, or the next barrier after sealing the
// table for its epoch.
func (m *Materialize) Next(ctx context.Context) (stream.Message, error) {
	if !m.counting {
		// Before the first write, which needs the committed counts.
		if err := m.table.TrackRowCounts(ctx); err != nil {
			return stream.Message{}, fmt.Errorf("mview: row counts: %w", err)
		}
		m.counting = true
	}
	for {
		// Once per output chunk: a large input chunk queues many.
		if err := ctx.Err(); err != nil {
			return stream.Message{}, err
		}
		if c, ok := m.queue.Pop(); ok {
			return stream.ChunkMsg(c), nil
		}
		if m.loading != nil {
			if msg, ok, err := m.nextLoaded(); err != nil || ok {
				return msg, err
			}
		}
		msg, err := m.input.Next(ctx)
		if err != nil {
			return stream.Message{}, err
		}
		switch {
		case msg.Chunk != nil:
			if err := m.apply(ctx, msg.Chunk); err != nil {
				return stream.Message{}, err
			}
		case msg.Fresh != nil && msg.Fresh.Loaded != nil:
			if err := m.addLoaded(msg.Fresh); err != nil {
				return stream.Message{}, err
			}
		case msg.Fresh != nil:
			forward, err := m.applyFreshRows(ctx, msg.Fresh)
			if err != nil || forward {
				return msg, err
			}
		case msg.Barrier != nil:
			// Nothing is buffered here: the queue is empty whenever an
			// input message is pulled.
			if err := m.table.Seal(msg.Barrier.Epoch); err != nil {
				return stream.Message{}, fmt.Errorf("mview: seal epoch %d: %w", msg.Barrier.Epoch, err)
			}
			return msg, nil
		default:
			return msg, nil
		}
	}
}

// apply writes one input chunk's visible rows in order and queues the
// resulting changes.
func (m *Materialize) apply(ctx context.Context, c *types.Chunk) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	idx := c.VisibleIndices()
	for k := 0; k < len(idx); k++ {
		i := idx[k]
		if m.overwrites && c.Op(i) == types.UpdateDelete {
			n, err := m.applyPairRun(ctx, c, idx[k:])
			if err != nil {
				return err
			}
			if n > 0 {
				k += n - 1
				continue
			}
		}
		var err error
		switch op := c.Op(i); {
		case op == types.UpdateDelete && k+1 < len(idx) && idx[k+1] == i+1 && c.Op(i+1) == types.UpdateInsert:
			// A pair is two adjacent visible rows; a half whose partner
			// is hidden is applied alone, as a plain delete or insert.
			err = m.applyUpdate(ctx, c.Row(i), c.Row(idx[k+1]))
			k++
		case op == types.Insert && m.fresh:
			var n int
			n, err = m.applyFreshRun(c, idx[k:])
			k += n - 1
		case op == types.Insert && m.trusted:
			var n int
			n, err = m.applyTrustedRun(c, idx[k:])
			k += n - 1
		case op.IsInsert():
			err = m.applyInsert(ctx, c.Row(i), nil)
		default:
			err = m.applyDelete(ctx, c.Row(i))
		}
		if err != nil {
			return err
		}
	}
	m.queue.Push(m.out.Take())
	return nil
}

// applyFreshRows stores fresh rows as they are encoded when the table
// can keep them so, and reports whether to pass them on as they are (a
// downstream that only takes no-shuffle dispatchers: each downstream Merge
// decodes what its chain does not take). Otherwise it decodes them only
// to emit them, and not at all with no downstream. Rows the table cannot
// keep as a run are decoded and applied as a chunk.
func (m *Materialize) applyFreshRows(ctx context.Context, f *stream.FreshRows) (forward bool, err error) {
	ok, err := m.storeFresh(f)
	if err != nil {
		return false, err
	}
	if !ok {
		c, err := f.Decode(m.schema)
		if err != nil {
			return false, fmt.Errorf("mview: decode fresh rows: %w", err)
		}
		return false, m.apply(ctx, c)
	}
	switch {
	case m.downstream.None():
		return false, nil
	case m.downstream.CarriesFresh():
		return true, nil
	}
	for lo := 0; lo < f.Len(); lo += m.chunkSize {
		c, err := f.DecodeRange(m.schema, lo, min(lo+m.chunkSize, f.Len()))
		if err != nil {
			return false, fmt.Errorf("mview: decode fresh rows: %w", err)
		}
		m.queue.Push(c)
	}
	return false, nil
}

// storeFresh keeps fresh rows as they are encoded when the table can: a
// table's inserts of new row ids, or trusted inserts while the table
// holds no other uncommitted write (applyTrustedRun checks the keys
// instead; these rows are kept as handed in, unchecked).
func (m *Materialize) storeFresh(f *stream.FreshRows) (bool, error) {
	switch {
	case m.fresh:
	case m.trusted && m.table.HoldsNoWrites():
		m.rows.forget()
	default:
		return false, nil
	}
	ok, err := m.table.InsertFreshEncoded(f.IDs, f.IDCol, f.Rows)
	if err != nil {
		return false, fmt.Errorf("mview: write table: %w", err)
	}
	return ok, nil
}

// applyInsert stores row; over an existing row it is an update. old is
// the row an update pair keeping the key retracts, nil for an insert (which
// expects no stored row).
func (m *Materialize) applyInsert(ctx context.Context, row, old types.Row) error {
	pk, key, err := m.rows.key(row)
	if err != nil {
		return err
	}
	stored, ok, err := m.rows.get(ctx, pk, key)
	if err != nil {
		return err
	}
	if old != nil {
		m.check.deleted(pk, old, stored, ok)
	} else {
		m.check.inserted(pk, ok)
	}
	if err := m.rows.put(row, key); err != nil {
		return err
	}
	if ok {
		m.emitUpdate(stored, row)
	} else {
		m.table.CountRows(row, 1)
		m.emit(types.Insert, row)
	}
	return nil
}

// applyFreshRun stores the plain inserts that start idx (visible rows of
// c) as one fresh run of the table, and returns how many it took. Rows
// the table cannot take as a run go one by one.
func (m *Materialize) applyFreshRun(c *types.Chunk, idx []int) (int, error) {
	return m.applyFreshRunAs(c, idx, m.applyFreshInsert)
}

// applyFreshRunAs is applyFreshRun with one for the first row when the
// table cannot take the rows as a run.
func (m *Materialize) applyFreshRunAs(c *types.Chunk, idx []int, one func(types.Row) error) (int, error) {
	n := 1
	for n < len(idx) && c.Op(idx[n]) == types.Insert {
		n++
	}
	ok, err := m.table.InsertFresh(c, idx[:n])
	if err != nil {
		return 0, fmt.Errorf("mview: write table: %w", err)
	}
	if !ok {
		return 1, one(c.Row(idx[0]))
	}
	m.emitRows(c, idx[:n])
	return n, nil
}

// emitRows emits rows idx of c (ascending) as they are, copying each
// contiguous run column by column and cutting output chunks at chunkSize.
func (m *Materialize) emitRows(c *types.Chunk, idx []int) {
	for len(idx) > 0 {
		run := 1
		for run < len(idx) && idx[run] == idx[0]+run {
			run++
		}
		take := min(run, max(m.chunkSize-m.out.Len(), 1))
		m.out.AppendRange(c, idx[0], idx[0]+take)
		if m.out.Len() >= m.chunkSize {
			m.queue.Push(m.out.Take())
		}
		idx = idx[take:]
	}
}

// applyTrustedRun stores the trusted plain inserts that start idx as a
// fresh run when the table holds no uncommitted write of their keys (a
// bulk load reaching an idle view, a table with a primary key, a join's
// output): the inserted keys are not stored (trusted), and no older write
// of them can shadow the run. The cache is emptied, as it may say "known
// absent" for one of them. It returns how many rows it took; a run the
// table refuses goes row by row.
//
// The table may hold other writes. It used to have to hold none, so that
// one short run of a join's output (a piece of an output chunk routed to
// this actor) put every later row of the epoch into the overlay: during a
// stall, millions of rows whose seal, sorting and encoding them, took
// seconds when a PAUSE let the barrier through (storage/preseal.go writes
// fresh rows ahead of the seal; the overlay's are written at it).
//
// The rows then stay encoded, in key order, and go to spill files past the
// store's bound (storage.StateTable.InsertFresh), where the overlay held
// each boxed row until the seal: a two-million-row COPY into a table keyed
// by a bigint peaked at 0.84 GB of RSS, and 0.40-0.42 GB this way; keyed
// by an int (which took this way only later), 689 MB, then 226 MB.
//
// A run shorter than trustedRunMin goes row by row: each fresh run costs
// the store's spill check a walk over the runs pending, and single-row
// INSERTs would make one run each (and empty the cache each epoch).
func (m *Materialize) applyTrustedRun(c *types.Chunk, idx []int) (int, error) {
	n := 1
	for n < min(len(idx), trustedRunMin) && c.Op(idx[n]) == types.Insert {
		n++
	}
	if n < trustedRunMin {
		return 1, m.applyTrustedInsert(c.Row(idx[0]))
	}
	for n < len(idx) && c.Op(idx[n]) == types.Insert {
		n++
	}
	ok, err := m.table.InsertFreshUnwritten(c, idx[:n])
	if err != nil {
		return 0, fmt.Errorf("mview: write table: %w", err)
	}
	if ok {
		m.rows.forget()
	}
	if !ok {
		for _, i := range idx[:n] {
			if err := m.applyTrustedInsert(c.Row(i)); err != nil {
				return 0, err
			}
		}
		return n, nil
	}
	m.emitRows(c, idx[:n])
	return n, nil
}

// trustedRunMin is the fewest trusted inserts kept as a fresh run (a
// variable so that tests can make it small).
var trustedRunMin = 64

// applyFreshInsert stores a row whose key was never used: no lookup, and
// no cache entry (a fresh key is read again only by a later delete or
// update, which looks it up).
func (m *Materialize) applyFreshInsert(row types.Row) error {
	if err := m.table.Insert(row); err != nil {
		return fmt.Errorf("mview: write table: %w", err)
	}
	m.table.CountRows(row, 1)
	m.emit(types.Insert, row)
	return nil
}

// applyTrustedInsert stores a view's inserted row without looking its key
// up: the view's input never inserts a key the view holds.
func (m *Materialize) applyTrustedInsert(row types.Row) error {
	_, key, err := m.rows.key(row)
	if err != nil {
		return err
	}
	if err := m.rows.insertUnread(row, key); err != nil {
		return err
	}
	m.table.CountRows(row, 1)
	m.emit(types.Insert, row)
	return nil
}

// applyDelete removes the stored row with row's PK, if any, and emits the
// stored row: downstream must retract what it was given, whatever the
// input's copy says.
func (m *Materialize) applyDelete(ctx context.Context, row types.Row) error {
	pk, key, err := m.rows.key(row)
	if err != nil {
		return err
	}
	if m.trusted {
		// The row is the one stored (see applyTrustedUpdate): a bulk
		// DELETE read each of its rows again, a point read a row.
		if err := m.rows.remove(row, key); err != nil {
			return err
		}
		m.table.CountRows(row, -1)
		m.emit(types.Delete, row)
		return nil
	}
	stored, ok, err := m.rows.get(ctx, pk, key)
	if err != nil {
		return err
	}
	m.check.deleted(pk, row, stored, ok)
	if !ok {
		return nil
	}
	if err := m.rows.remove(stored, key); err != nil {
		return err
	}
	m.table.CountRows(stored, -1)
	m.emit(types.Delete, stored)
	return nil
}

// applyUpdate handles an update pair. Keeping the PK, it is an insert of
// the new row (which overwrites, or inserts if the old row was never
// stored), or in a trusted view a write of it unread; changing the PK, it
// is a delete of the old key and an insert.
func (m *Materialize) applyUpdate(ctx context.Context, old, new types.Row) error {
	_, oldKey, err := m.rows.key(old)
	if err != nil {
		return err
	}
	_, newKey, err := m.rows.key(new)
	if err != nil {
		return err
	}
	if oldKey != newKey {
		if err := m.applyDelete(ctx, old); err != nil {
			return err
		}
		return m.applyInsert(ctx, new, nil)
	}
	if m.trusted {
		return m.applyTrustedUpdate(old, new, newKey)
	}
	return m.applyInsert(ctx, new, old)
}

// applyPairRun stores the update pairs that start idx, each keeping its
// key, as one fresh chunk of overwrites (storage.StateTable.
// OverwriteFresh) when there are trustedRunMin of them and the table holds
// no uncommitted write: the table's writers read it under its lock, so
// each pair's old row is the one the table holds. In the overlay, a
// two-million-row UPDATE's new rows took 1.1 GB until the seal. Pairs it
// scanned but cannot take so are applied one by one here (met again pair
// by pair, a run would be scanned again for each). It returns how many
// rows it applied (0: none).
func (m *Materialize) applyPairRun(ctx context.Context, c *types.Chunk, idx []int) (int, error) {
	if !m.table.HoldsNoWrites() {
		return 0, nil
	}
	news := m.keptKeyPairs(c, idx)
	ok := false
	if len(news) >= trustedRunMin {
		m.rows.forget() // it may hold the old rows
		var err error
		if ok, err = m.table.OverwriteFresh(c, news); err != nil {
			return 0, fmt.Errorf("mview: write table: %w", err)
		}
	}
	for _, i := range news {
		if !ok {
			if err := m.applyUpdate(ctx, c.Row(i-1), c.Row(i)); err != nil {
				return 0, err
			}
			continue
		}
		m.emitUpdate(c.Row(i-1), c.Row(i))
	}
	return 2 * len(news), nil
}

// keptKeyPairs returns the new rows of the update pairs that start idx
// and keep their keys.
func (m *Materialize) keptKeyPairs(c *types.Chunk, idx []int) []int {
	var news []int
	pk := m.table.Desc().PK
	for k := 0; k+1 < len(idx); k += 2 {
		i := idx[k]
		if c.Op(i) != types.UpdateDelete || idx[k+1] != i+1 || c.Op(i+1) != types.UpdateInsert {
			break
		}
		for _, col := range pk {
			if types.Compare(c.Cols[col].Get(i), c.Cols[col].Get(i+1)) != 0 {
				return news
			}
		}
		news = append(news, i+1)
	}
	return news
}

// applyTrustedUpdate writes a trusted view's update pair that keeps its
// key without reading the stored row: the view's input is a consistent
// change stream, so old is what the view holds (as RisingWave's
// materialize trusts it by default). An aggregate view updates a group's
// row per change, and the read cost a point lookup each time the group
// had left the cache.
func (m *Materialize) applyTrustedUpdate(old, new types.Row, key string) error {
	if err := m.rows.put(new, key); err != nil {
		return err
	}
	m.emitUpdate(old, new)
	return nil
}

func (m *Materialize) emit(op types.Op, row types.Row) {
	m.queue.Push(m.out.Append(op, row))
}

// emitUpdate emits an update pair in one chunk, flushing first if the pair
// would not fit; with chunks of one row it cannot be a pair at all.
func (m *Materialize) emitUpdate(old, new types.Row) {
	if m.chunkSize < 2 {
		m.emit(types.Delete, old)
		m.emit(types.Insert, new)
		return
	}
	if m.out.Len()+2 > m.chunkSize {
		m.queue.Push(m.out.Take())
	}
	m.emit(types.UpdateDelete, old)
	m.emit(types.UpdateInsert, new)
}
