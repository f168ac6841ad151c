package engine

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/task"
	"github.com/sluice-db/sluice/internal/types"
)

// The crash test's child process: this test binary re-executed with
// crashChildEnv set. It opens the engine (recovering whatever the last
// child left), learns the acknowledged rows from the tables, prints READY
// and runs crashWriters concurrent writers until it is killed. Every
// statement is printed ("B …") before its Write starts and acknowledged
// ("A w seq") after it returns, so the parent knows every acknowledged
// statement and each writer's one statement in flight.

const (
	crashChildEnv = "SLUICE_CRASH_CHILD_DIR"
	crashRunEnv   = "SLUICE_CRASH_RUN"
)

func crashOptions(dir string) Options {
	return Options{Dir: dir, BarrierInterval: 10 * time.Millisecond, Parallelism: 2, ChunkSize: 64, CheckInserts: true,
		BulkLoadFrom: 1}
}

// TestCrashChild is the child's body; it only runs when re-executed.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashChildEnv)
	if dir == "" {
		t.Skip("runs only as the crash test's child process")
	}
	run, _ := strconv.Atoi(os.Getenv(crashRunEnv))
	out := &lineOut{w: os.Stdout}
	fail := func(what string, err error) {
		out.print(fmt.Sprintf("ERR %s: %v", what, err))
		os.Exit(3)
	}
	ctx := context.Background()
	encodedFreshFrom = 1 << 10 // a bulk statement's pieces go to segments
	bulkLoadUnderViews = true  // and their rows to a load's file, which t's views read
	out.print("OPEN")
	e, err := Open(ctx, crashOptions(dir))
	if err != nil {
		fail("open", err)
	}
	out.print("OPENED")
	if err := setupWorkload(ctx, e); err != nil {
		fail("setup", err)
	}
	ws, err := newCrashWriters(ctx, e, run, out.print)
	if err != nil {
		fail("initial scan", err)
	}
	out.print("READY")
	if err := runCrashWriters(ctx, e, ws, -1); err != nil {
		fail("write", err)
	}
}

// lineOut prints whole lines, one write each, so concurrent writers'
// lines never interleave and each is in the pipe before the next step.
type lineOut struct {
	mu sync.Mutex
	w  io.Writer
}

func (o *lineOut) print(s string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	_, _ = io.WriteString(o.w, s+"\n")
}

// crashWriter is one client: it writes statements on its own keys and
// knows, from its own acknowledged statements, which rows it has.
type crashWriter struct {
	id   int
	e    *Engine
	emit func(string)
	rng  *rand.Rand
	m    model // this writer's rows as of its acknowledged statements
	seq  int64
	base int64 // fresh keys of this run: base + ord*crashWriters + id
	ord  int64
	// bulkOrd numbers the keys of bulk inserts into u (insertBulkU).
	bulkOrd int64
	rids    *ridCache
}

// newCrashWriters reads the committed rows (after a flush, every
// acknowledged one) and hands each writer its own.
func newCrashWriters(ctx context.Context, e *Engine, run int, emit func(string)) ([]*crashWriter, error) {
	if err := e.Flush(ctx); err != nil {
		return nil, err
	}
	tRows, uRows, err := scanWorkload(ctx, e)
	if err != nil {
		return nil, err
	}
	ob := observe(tRows, uRows)
	rids := &ridCache{m: map[int64]int64{}}
	ws := make([]*crashWriter, crashWriters)
	for i := range ws {
		ws[i] = &crashWriter{id: i, e: e, emit: emit, m: ob.t[i], rids: rids,
			rng: rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(i))), base: int64(run+1) << 32}
	}
	return ws, nil
}

// runCrashWriters runs every writer for n statements (n < 0: until the
// process is killed) next to a goroutine that learns row ids from scans.
func runCrashWriters(ctx context.Context, e *Engine, ws []*crashWriter, n int) error {
	g, gctx := task.NewGroup(ctx)
	done := make(chan struct{})
	g.Go(gctx, "crash-rowids", func(ctx context.Context) error { return ws[0].rids.refresh(ctx, e, done) })
	var wg sync.WaitGroup
	for _, w := range ws {
		wg.Add(1)
		g.Go(gctx, fmt.Sprintf("crash-writer-%d", w.id), func(ctx context.Context) error {
			defer wg.Done()
			return w.run(ctx, n)
		})
	}
	wg.Wait()
	close(done)
	return g.Wait()
}

func (w *crashWriter) run(ctx context.Context, n int) error {
	for i := 0; n < 0 || i < n; i++ {
		s := w.next()
		w.emit(s.encode())
		if err := w.write(ctx, s); err != nil {
			return fmt.Errorf("writer %d statement %d: %w", w.id, s.seq, err)
		}
		w.emit(fmt.Sprintf("A %d %d", w.id, s.seq))
		if err := w.m.apply(s); err != nil {
			return err
		}
	}
	return nil
}

// write writes s: one Write, or a transaction's two parts in one Commit.
func (w *crashWriter) write(ctx context.Context, s stmt) error {
	if s.bulk {
		return w.writePieces(ctx, s)
	}
	if s.also == nil {
		return w.e.Write(ctx, s.table, s.chunk())
	}
	var tws []*TableWriter
	defer func() {
		for _, tw := range tws {
			tw.Close()
		}
	}()
	for _, part := range []stmt{s, *s.also} { // t before u: one lock order
		rel, ok := w.e.catalog.ByName(part.table)
		if !ok {
			return fmt.Errorf("no table %s", part.table)
		}
		tw, err := w.e.LockTable(ctx, rel)
		if err != nil {
			return err
		}
		tws = append(tws, tw)
		c := part.chunk()
		if checkedWrites(rel) { // read the keys, as a statement does
			if c, err = w.e.upsertChanges(ctx, rel, c); err != nil {
				return err
			}
			if c == nil {
				continue
			}
		}
		if _, err := tw.Stage(ctx, c); err != nil {
			return err
		}
	}
	return w.e.Commit(ctx, tws...)
}

// writePieces writes a bulk statement's inserts as the SQL layer writes a
// COPY: prepared in pieces of crashPieceRows (each large enough to go to a
// segment of its own), then staged together under the table's lock and
// committed as one synced batch. Its keys are fresh, so it checks none.
func (w *crashWriter) writePieces(ctx context.Context, s stmt) error {
	rel, ok := w.e.catalog.ByName(s.table)
	if !ok {
		return fmt.Errorf("no table %s", s.table)
	}
	if s.table == "u" && s.also == nil {
		return w.writeUpsertPieces(ctx, rel, s)
	}
	c := s.chunk()
	var pieces []*Prepared
	// Outside a block, a bulk insert into t also writes its load's file.
	var buf PieceBuffer
	if s.also == nil {
		w.e.StartBulkLoad(rel, &buf)
	}
	for lo := 0; lo < c.Cardinality(); lo += crashPieceRows {
		b := types.NewBuilder(c.Types(), crashPieceRows)
		b.AppendRange(c, lo, min(lo+crashPieceRows, c.Cardinality()))
		p, err := w.e.Prepare(ctx, rel, b.Take(), &buf)
		if err != nil {
			buf.Release()
			return err
		}
		pieces = append(pieces, p)
	}
	if load := w.e.FinishBulkLoad(rel, &buf, len(pieces)); load != nil {
		pieces = append([]*Prepared{load}, pieces...)
	}
	if s.also != nil {
		return w.writeBlock(ctx, rel, pieces, *s.also)
	}
	tw, err := w.e.LockTable(ctx, rel)
	if err != nil {
		return err
	}
	defer tw.Close()
	for _, p := range pieces {
		if err := tw.StagePrepared(p); err != nil {
			return err
		}
	}
	return w.e.Commit(ctx, tw)
}

// writeUpsertPieces writes a bulk upsert into u as the SQL layer writes
// INSERT … SELECT … ON CONFLICT DO UPDATE: its changes read under the
// table's lock (inserts, and update pairs over held keys), prepared in
// pieces, the pairs in pieces of their own after the inserts, and
// committed as one synced batch.
func (w *crashWriter) writeUpsertPieces(ctx context.Context, rel *catalog.Relation, s stmt) error {
	tw, err := w.e.LockTable(ctx, rel)
	if err != nil {
		return err
	}
	defer tw.Close()
	c, err := w.e.upsertChanges(ctx, rel, s.chunk())
	if err != nil || c == nil {
		return err
	}
	var inserts, pairs []int
	for _, i := range c.VisibleIndices() {
		if c.Op(i) == types.Insert {
			inserts = append(inserts, i)
		} else {
			pairs = append(pairs, i)
		}
	}
	for _, idx := range [][]int{inserts, pairs} {
		for lo := 0; lo < len(idx); lo += 2 * (crashPieceRows / 2) { // a pair is never cut
			b := types.NewBuilder(c.Types(), crashPieceRows+1)
			for _, i := range idx[lo:min(lo+2*(crashPieceRows/2), len(idx))] {
				b.Append(c.Op(i), c.Row(i))
			}
			p, err := w.e.Prepare(ctx, rel, b.Take(), nil)
			if err != nil {
				return err
			}
			if err := tw.StagePrepared(p); err != nil {
				return err
			}
		}
	}
	return w.e.Commit(ctx, tw)
}

// writeBlock writes a bulk statement's pieces into rel and also's changes
// in one transaction block, as a session does for BEGIN; COPY …; UPDATE
// …; COMMIT.
func (w *crashWriter) writeBlock(ctx context.Context, rel *catalog.Relation, pieces []*Prepared, also stmt) error {
	txn := w.e.Begin()
	defer txn.Rollback()
	tw, err := txn.Writer(ctx, rel)
	if err != nil {
		return err
	}
	for _, p := range pieces {
		if err := tw.StagePrepared(p); err != nil {
			tw.Close()
			return err
		}
	}
	tw.Close()
	relU, ok := w.e.catalog.ByName(also.table)
	if !ok {
		return fmt.Errorf("no table %s", also.table)
	}
	if tw, err = txn.Writer(ctx, relU); err != nil {
		return err
	}
	c, err := w.e.upsertChanges(ctx, relU, also.chunk())
	if err == nil && c != nil {
		_, err = tw.Stage(ctx, c)
	}
	tw.Close() // the statement ends; COMMIT takes the tables' locks again
	if err != nil {
		return err
	}
	_, err = txn.Commit(ctx)
	return err
}

// crashPieceRows is the rows of a bulk statement's piece: about 2 KB.
const crashPieceRows = 128

// next makes the writer's next statement: mostly small ones, now and then
// one larger than a chunk (the table source cuts its record) or a bulk
// one in pieces, and enough deletes that t stays a few hundred rows per
// writer.
func (w *crashWriter) next() stmt {
	w.seq++
	s := stmt{writer: w.id, seq: w.seq}
	if w.rng.IntN(40) == 0 {
		if known := w.knownRows(); len(known) > crashPieceRows && w.rng.IntN(3) == 0 {
			// An UPDATE or DELETE of many rows of t in pieces of update
			// pairs or deletes (a piece holds whole pairs), as the SQL
			// layer writes one.
			s.bulk, s.table, s.ops = true, "t", w.updateT(known, len(known))
			if w.rng.IntN(2) == 0 {
				s.ops = w.deleteT(known, len(known)/2)
			}
			return s
		}
		// A bulk statement of fresh keys into t (keyed by its hidden row
		// id) or u (keyed by k; the keys are from a range of their own).
		n := 300 + w.rng.IntN(1200)
		s.bulk, s.table, s.ops = true, "t", w.insertT(n)
		if w.rng.IntN(2) == 0 {
			s.table, s.ops = "u", w.insertBulkU(n)
		}
		if w.rng.IntN(2) == 0 {
			// In a transaction block with a change to u (a COPY inside
			// BEGIN … COMMIT): the block keeps the pieces.
			s.also = &stmt{writer: w.id, seq: w.seq, table: "u", ops: w.changeU(1 + w.rng.IntN(6))}
		} else if s.table == "u" {
			// An upsert over held keys too (INSERT … SELECT … ON
			// CONFLICT DO UPDATE): pieces of update pairs.
			s.ops = append(s.ops, w.upsertHeldU(1+w.rng.IntN(200))...)
		}
		return s
	}
	n := 1 + w.rng.IntN(6)
	if w.rng.IntN(10) == 0 {
		n = 30 + w.rng.IntN(120)
	}
	known := w.knownRows()
	if w.rng.IntN(8) == 0 {
		// A transaction over both tables; now and then a large one.
		if w.rng.IntN(4) == 0 {
			n = 500 + w.rng.IntN(2000)
		}
		s.table, s.ops = "t", w.insertT(n)
		s.also = &stmt{writer: w.id, seq: w.seq, table: "u", ops: w.changeU(1 + w.rng.IntN(6))}
		return s
	}
	switch r := w.rng.IntN(100); {
	case r < 15 && len(known) > 0:
		s.table, s.ops = "t", w.updateT(known, n)
	case (r < 27 || len(w.m.t) > 300) && len(known) > 0:
		s.table, s.ops = "t", w.deleteT(known, n)
	case r < 50:
		s.table, s.ops = "u", w.changeU(n)
	default:
		s.table, s.ops = "t", w.insertT(n)
	}
	return s
}

func (w *crashWriter) value() int64 { return w.rng.Int64N(2001) - 1000 }

func (w *crashWriter) freshKey(ord int64) int64 { return w.base + ord*crashWriters + int64(w.id) }

func (w *crashWriter) insertT(n int) []wop {
	ops := make([]wop, n)
	for i := range ops {
		ops[i] = wop{kind: 'i', k: w.freshKey(w.ord), v: w.value()}
		w.ord++
	}
	return ops
}

// insertBulkU inserts n rows into u on keys nothing else writes until
// they are acknowledged (then changeU may pick them as u's keys).
func (w *crashWriter) insertBulkU(n int) []wop {
	ops := make([]wop, n)
	for i := range ops {
		ops[i] = wop{kind: 'i', k: w.base + 1<<31 + w.bulkOrd*crashWriters + int64(w.id), v: w.value()}
		w.bulkOrd++
	}
	return ops
}

// upsertHeldU gives up to n distinct keys u holds new values (inserts
// over held keys: upserts).
func (w *crashWriter) upsertHeldU(n int) []wop {
	var ops []wop
	for k := range w.m.u {
		if len(ops) == n {
			break
		}
		ops = append(ops, wop{kind: 'i', k: k, v: w.value()})
	}
	return ops
}

// knownRows are the writer's rows whose row id it knows: only those can
// be updated or deleted, as a DELETE or UPDATE reads them first.
func (w *crashWriter) knownRows() []int64 {
	var ks []int64
	for k, r := range w.m.t {
		if r.rid == 0 {
			if rid, ok := w.rids.get(k); ok {
				r.rid = rid
				w.m.t[k] = r
			}
		}
		if r.rid != 0 {
			ks = append(ks, k)
		}
	}
	w.rng.Shuffle(len(ks), func(i, j int) { ks[i], ks[j] = ks[j], ks[i] })
	return ks
}

func (w *crashWriter) updateT(known []int64, n int) []wop {
	var ops []wop
	for _, k := range known[:min(n, len(known))] {
		r := w.m.t[k]
		ops = append(ops, wop{kind: 'u', k: k, v: r.v, v2: w.value(), rid: r.rid, hasRowID: true})
	}
	return ops
}

func (w *crashWriter) deleteT(known []int64, n int) []wop {
	var ops []wop
	for _, k := range known[:min(n, len(known))] {
		ops = append(ops, wop{kind: 'd', k: k, v: w.m.t[k].v, rid: w.m.t[k].rid, hasRowID: true})
	}
	return ops
}

// changeU upserts, updates or deletes rows of u, on keys of the writer's
// rows of t (so j changes), on keys t gets soon, or on keys u has; a key
// appears once per statement.
func (w *crashWriter) changeU(n int) []wop {
	var ops []wop
	seen := map[int64]bool{}
	for range n {
		k := w.uKey()
		if seen[k] {
			continue
		}
		seen[k] = true
		cur, ok := w.m.u[k]
		switch r := w.rng.IntN(3); {
		case ok && r == 0:
			ops = append(ops, wop{kind: 'd', k: k, v: cur})
		case ok && r == 1:
			ops = append(ops, wop{kind: 'u', k: k, v: cur, v2: w.value()})
		default:
			ops = append(ops, wop{kind: 'i', k: k, v: w.value()})
		}
	}
	return ops
}

func (w *crashWriter) uKey() int64 {
	switch r := w.rng.IntN(10); {
	case r < 5 && len(w.m.t) > 0:
		return anyKey(w.m.t, w.rng)
	case r < 8 && len(w.m.u) > 0:
		return anyKey(w.m.u, w.rng)
	default:
		return w.freshKey(w.ord + w.rng.Int64N(20))
	}
}

func anyKey[V any](m map[int64]V, rng *rand.Rand) int64 {
	i := rng.IntN(len(m))
	for k := range m {
		if i == 0 {
			return k
		}
		i--
	}
	panic("unreachable")
}

// chunk is the statement as the SQL layer would write it: inserts into t
// without row ids (the engine assigns them), its deletes and updates with.
func (s stmt) chunk() *types.Chunk {
	ts := []types.Type{types.TInt64, types.TInt64}
	if s.table == "t" && s.ops[0].kind != 'i' {
		ts = append(ts, types.TInt64)
	}
	b := types.NewBuilder(ts, 2*len(s.ops)+1)
	row := func(o wop, v int64) types.Row {
		if len(ts) == 3 {
			return types.Row{o.k, v, o.rid}
		}
		return types.Row{o.k, v}
	}
	for _, o := range s.ops {
		switch o.kind {
		case 'i':
			b.Append(types.Insert, row(o, o.v))
		case 'd':
			b.Append(types.Delete, row(o, o.v))
		case 'u':
			b.Append(types.UpdateDelete, row(o, o.v))
			b.Append(types.UpdateInsert, row(o, o.v2))
		}
	}
	return b.Take()
}

// ridCache holds the row ids of t's committed rows, from periodic scans.
type ridCache struct {
	mu sync.Mutex
	m  map[int64]int64
}

func (c *ridCache) get(k int64) (int64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	rid, ok := c.m[k]
	return rid, ok
}

func (c *ridCache) refresh(ctx context.Context, e *Engine, done <-chan struct{}) error {
	for {
		rows, err := e.Scan(ctx, "t")
		if err != nil {
			return err
		}
		c.mu.Lock()
		for _, r := range rows {
			c.m[r[0].(int64)] = r[2].(int64)
		}
		c.mu.Unlock()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-done:
			return nil
		case <-time.After(50 * time.Millisecond):
		}
	}
}
