package engine

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// A transaction block (Txn) stages its writes and commits them in one
// batch. Between its statements it holds no table lock: each statement
// takes its table's lock like any other, and what the block holds is the
// keys it changed (row locks). A key another open block holds fails the
// statement with 40001 at once — a block never waits for another, so no
// two can deadlock — and a single statement that would change such a key
// gets a *KeyLockedError and waits for the block to end before it runs
// again (it holds no lock while it waits), as a Postgres statement waits
// for a row lock. Plain inserts of fresh row ids cannot conflict and
// take no lock. COMMIT takes the locks of the tables written, in id order
// (so it cannot deadlock with another COMMIT), writes the batch and
// releases the keys.

// Txn is an open transaction block.
type Txn struct {
	e      *Engine
	done   chan struct{}
	keys   []keyRef
	tables []*txnTable // in the order first written
	// runTables are the tables of which the block holds runs of keys.
	runTables []uint32
}

type txnTable struct {
	rel     *catalog.Relation
	pending []pendingWrite     // staged chunks and pieces, in order
	own     *storage.OwnWrites // the staged writes, as statements read them
}

// keyRef names one row: its table and encoded primary key.
type keyRef struct {
	table uint32
	key   string
}

// keyLocks maps the keys open blocks changed to their block; perTable
// counts them, so writes to a table no block holds skip the check.
type keyLocks struct {
	mu   sync.Mutex
	held map[keyRef]*Txn
	// runs are the keys of blocks' bulk statements, a run per piece
	// (txn_pieces.go), by table.
	runs     map[uint32][]heldRun
	perTable map[uint32]int
}

// KeyLockedError is a statement's write to a key an open transaction
// block holds: Wait for the block to end, then run the statement again.
type KeyLockedError struct {
	table string
	done  chan struct{}
}

func (e *KeyLockedError) Error() string {
	return fmt.Sprintf("a row of %q is locked by an open transaction", e.table)
}

// Wait returns once the block holding the key has ended, or with ctx's
// error.
func (e *KeyLockedError) Wait(ctx context.Context) error {
	select {
	case <-e.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Begin starts a transaction block.
func (e *Engine) Begin() *Txn { return &Txn{e: e, done: make(chan struct{})} }

// Writer takes rel's lock for one statement of the block: chunks it
// stages are checked against other blocks' keys and kept in the block.
// Close it at the end of the statement.
func (t *Txn) Writer(ctx context.Context, rel *catalog.Relation) (*TableWriter, error) {
	w, err := t.e.LockTable(ctx, rel)
	if err != nil {
		return nil, err
	}
	w.txn = t
	return w, nil
}

// Overlay makes the block's staged writes the newest layer of sn, so that
// its statements read their own writes.
func (t *Txn) Overlay(sn *storage.Snapshot) error {
	for _, tt := range t.tables {
		if err := sn.Overlay(tt.own); err != nil {
			return err
		}
	}
	return nil
}

// Written reports whether the block staged anything.
func (t *Txn) Written() bool { return len(t.tables) > 0 }

// stage keeps a prepared chunk in the block.
func (t *Txn) stage(rel *catalog.Relation, full *types.Chunk) error {
	tt, err := t.table(rel)
	if err != nil {
		return err
	}
	tt.pending = append(tt.pending, pendingWrite{chunk: full})
	return tt.own.Add(full)
}

// table returns the block's writes to rel, made if there are none yet.
func (t *Txn) table(rel *catalog.Relation) (*txnTable, error) {
	for _, x := range t.tables {
		if x.rel.ID == rel.ID {
			return x, nil
		}
	}
	own, err := storage.NewOwnWrites(toDesc(rel))
	if err != nil {
		return nil, err
	}
	tt := &txnTable{rel: rel, own: own}
	t.tables = append(t.tables, tt)
	return tt, nil
}

// Commit writes every staged chunk in one synced batch and ends the
// block. It returns, per relation id, the seq of the table's record.
func (t *Txn) Commit(ctx context.Context) (map[uint32]uint64, error) {
	defer t.Rollback()
	tables := slices.Clone(t.tables)
	slices.SortFunc(tables, func(a, b *txnTable) int { return int(a.rel.Table.ID) - int(b.rel.Table.ID) })
	var ws []*TableWriter
	defer func() {
		for _, w := range ws {
			w.Close()
		}
	}()
	for _, tt := range tables {
		w, err := t.e.LockTable(ctx, tt.rel)
		if err != nil {
			return nil, err
		}
		w.pending = tt.pending
		ws = append(ws, w)
	}
	if err := t.e.Commit(ctx, ws...); err != nil {
		return nil, err
	}
	seqs := map[uint32]uint64{}
	for _, w := range ws {
		seqs[w.rel.ID] = w.seq
	}
	return seqs, nil
}

// Rollback discards the staged writes and releases the block's keys; it
// is idempotent (Commit calls it too).
func (t *Txn) Rollback() {
	for _, tt := range t.tables {
		for _, pw := range tt.pending {
			if pw.piece != nil {
				pw.piece.Release(t.e) // not once Commit handed it off
			}
		}
	}
	t.tables = nil
	select {
	case <-t.done:
		return
	default:
	}
	l := &t.e.keyLocks
	l.mu.Lock()
	for _, k := range t.keys {
		if l.held[k] == t {
			delete(l.held, k)
			l.perTable[k.table]--
		}
	}
	l.releaseRuns(t)
	l.mu.Unlock()
	t.keys = nil
	close(t.done)
}

// lockKeys takes, for txn (nil: a single statement, which takes none),
// the keys chunk full of rel changes. A key another block holds is 40001
// for a block and a *KeyLockedError for a single statement. The caller
// holds rel's write lock, so no other block takes a key of rel meanwhile.
func (e *Engine) lockKeys(txn *Txn, rel *catalog.Relation, full *types.Chunk) error {
	if txn == nil {
		return e.checkKeys(nil, rel, full)
	}
	return e.lockKeysOf(txn, rel, full, true)
}

// lockKeysOf checks the keys the rows of c change against other blocks'
// (free, freeOfRuns) and, when take, takes them for txn.
func (e *Engine) lockKeysOf(txn *Txn, rel *catalog.Relation, c *types.Chunk, take bool) error {
	keys, err := changedKeys(rel, c)
	if err != nil {
		return err
	}
	l := &e.keyLocks
	if err := l.freeOfRuns(txn, rel, keys); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.free(txn, rel, keys); err != nil || !take {
		return err
	}
	if l.held == nil {
		l.held, l.perTable = map[keyRef]*Txn{}, map[uint32]int{}
	}
	for _, k := range keys {
		if l.held[k.keyRef] == nil {
			l.held[k.keyRef] = txn
			l.perTable[k.table]++
			txn.keys = append(txn.keys, k.keyRef)
		}
	}
	return nil
}

// anyHeld reports whether a block holds a key of table id.
func (l *keyLocks) anyHeld(id uint32) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.perTable[id] > 0
}

// free fails if a block other than txn holds one of keys by a map entry:
// 40001 for a block, a *KeyLockedError for a single statement (txn nil).
// l.mu is held.
func (l *keyLocks) free(txn *Txn, rel *catalog.Relation, keys []changedKey) error {
	for _, k := range keys {
		if other := l.held[k.keyRef]; other != nil && other != txn {
			return heldErr(txn, rel, other)
		}
	}
	return nil
}

// heldErr is the error of txn's (nil: a statement's) write to a key of
// rel that block other holds.
func heldErr(txn *Txn, rel *catalog.Relation, other *Txn) error {
	if txn != nil {
		return sqlerr.Errorf(sqlerr.Code("40001"),
			"could not serialize access due to concurrent update: a row of %q is changed by another open transaction", rel.Name)
	}
	return &KeyLockedError{table: rel.Name, done: other.done}
}

// changedKey is a key a chunk changes: its lock's name and its columns.
type changedKey struct {
	keyRef
	pk types.Row
}

// changedKeys returns the keys of the rows a prepared chunk changes, but
// not those of plain inserts of fresh row ids.
func changedKeys(rel *catalog.Relation, full *types.Chunk) ([]changedKey, error) {
	keys := newPKKeys(rel)
	rowID := hasRowID(rel)
	var out []changedKey
	for i := range full.Capacity() {
		if !full.Visible(i) || (rowID && full.Op(i) == types.Insert) {
			continue
		}
		pk, key, err := keys.of(full, i)
		if err != nil {
			return nil, err
		}
		out = append(out, changedKey{keyRef{table: rel.Table.ID, key: string(key)}, pk})
	}
	return out, nil
}

// pkKeys encodes the primary keys of a relation's rows.
type pkKeys struct {
	rel    *catalog.Relation
	types  []types.Type
	orders []codec.Order
	buf    []byte
}

func newPKKeys(rel *catalog.Relation) *pkKeys {
	k := &pkKeys{rel: rel, types: make([]types.Type, len(rel.PK)), orders: rel.Table.Orders}
	for i, c := range rel.PK {
		k.types[i] = rel.Columns[c].Type
	}
	if k.orders == nil {
		k.orders = make([]codec.Order, len(rel.PK))
	}
	return k
}

// of returns row i of c's primary key and its encoding, valid until the
// next call.
func (k *pkKeys) of(c *types.Chunk, i int) (types.Row, []byte, error) {
	pk := make(types.Row, len(k.rel.PK))
	for j, col := range k.rel.PK {
		pk[j] = c.Cols[col].Get(i)
	}
	var err error
	k.buf, err = codec.EncodeKey(k.buf[:0], pk, k.types, k.orders)
	return pk, k.buf, err
}
