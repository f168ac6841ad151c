package engine

import (
	"slices"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/types"
)

// A bulk statement inside a transaction block (a COPY or INSERT … SELECT
// of millions of rows between BEGIN and COMMIT) collected every row in
// memory, boxed, and again in the block's overlay. Now the block keeps
// the statement's pieces (Prepare) as a statement outside a block does,
// in their log segments, until COMMIT writes them with the block's other
// records, in order.
//
// The block reads its own pieces back: those of new row ids as a fresh
// run each, from their segments (storage.OwnWrites.AddFresh); any other
// (of a table with a primary key, an UPDATE's or DELETE's) as a run of
// the store's, which the piece's rows are written to once
// (OwnWrites.AddRun). The keys of such a run are
// the block's row locks too: another block or statement that changes one
// finds it through the run's bloom filter, not a map entry per key
// (keyLocks.runs).

// heldRun is a run of keys a block's bulk statement inserted into a
// table, which the block holds.
type heldRun struct {
	txn  *Txn
	keys *storage.RunKeys
}

// stagePiece keeps piece p of a bulk statement into rel in the block.
// Its rows are plain inserts, or an UPDATE's or DELETE's changes of rows
// read under the table's lock, checked by the caller against the table,
// the block's earlier writes and other blocks' keys (CheckKeyLocks).
func (t *Txn) stagePiece(rel *catalog.Relation, p *Prepared) error {
	tt, err := t.table(rel)
	if err != nil {
		return err
	}
	if p.write.Fresh {
		err = t.stageFresh(tt, p)
	} else {
		err = t.stageKeyed(tt, p)
	}
	if err != nil {
		return err
	}
	tt.pending = append(tt.pending, pendingWrite{piece: p})
	return nil
}

// stageFresh makes a piece of new row ids readable by the block.
func (t *Txn) stageFresh(tt *txnTable, p *Prepared) error {
	switch w := p.write; {
	case w.Rows != nil:
		return tt.own.Add(w.Rows) // a small piece, kept in memory
	case w.Encoded != nil && w.Segment != "":
		return tt.own.AddFresh(t.e.store, w.Encoded, w.Segment)
	}
	return sqlerr.Errorf(sqlerr.Internal, "engine: a piece of %s with neither rows nor a segment", tt.rel.Name)
}

// stageKeyed makes a piece of a table with a primary key, or of changes
// (of a table keyed by its row id too), readable by the block, and holds
// its keys.
func (t *Txn) stageKeyed(tt *txnTable, p *Prepared) error {
	rows, err := p.Rows()
	if err != nil {
		return err
	}
	keys, err := tt.own.AddRun(t.e.store, rows)
	if err != nil {
		return err
	}
	if keys == nil {
		// Kept as a chunk (too small for a run): its keys go to the map.
		return t.e.lockKeys(t, tt.rel, rows)
	}
	p.write.Run = keys // the log's tail takes a copy at COMMIT
	l := &t.e.keyLocks
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.runs == nil {
		l.runs = map[uint32][]heldRun{}
	}
	if l.perTable == nil {
		l.held, l.perTable = map[keyRef]*Txn{}, map[uint32]int{}
	}
	id := tt.rel.Table.ID
	l.runs[id] = append(l.runs[id], heldRun{txn: t, keys: keys})
	l.perTable[id]++
	if !slices.Contains(t.runTables, id) {
		t.runTables = append(t.runTables, id)
	}
	return nil
}

// freeOfRuns fails if a run of a block other than txn holds one of keys
// (heldErr). It reads the runs without l.mu (a run may take an sstable
// seek): they are copied under it. A run of a block that has ended
// meanwhile is passed over.
func (l *keyLocks) freeOfRuns(txn *Txn, rel *catalog.Relation, keys []changedKey) error {
	l.mu.Lock()
	runs := slices.Clone(l.runs[rel.Table.ID])
	l.mu.Unlock()
	runs = slices.DeleteFunc(runs, func(hr heldRun) bool { return hr.txn == txn })
	if len(runs) == 0 || len(keys) == 0 {
		return nil
	}
	var key []byte
	for _, k := range keys {
		var err error
		if key, err = runs[0].keys.Key(key[:0], k.pk); err != nil {
			return err
		}
		for _, hr := range runs {
			ok, err := hr.keys.HasKey(key)
			if err != nil {
				return err
			}
			if ok && !hr.txn.ended() {
				return heldErr(txn, rel, hr.txn)
			}
		}
	}
	return nil
}

// ended reports whether the block has committed or rolled back.
func (t *Txn) ended() bool {
	select {
	case <-t.done:
		return true
	default:
		return false
	}
}

// releaseRuns lets go of the runs of keys t holds; l.mu is held.
func (l *keyLocks) releaseRuns(t *Txn) {
	for _, id := range t.runTables {
		runs := l.runs[id]
		kept := slices.DeleteFunc(slices.Clone(runs), func(hr heldRun) bool { return hr.txn == t })
		l.perTable[id] -= len(runs) - len(kept)
		if len(kept) == 0 {
			delete(l.runs, id)
		} else {
			l.runs[id] = kept
		}
	}
	t.runTables = nil
}

// checkKeys fails if a block other than txn holds a key the rows of c
// (of rel) change, 40001 for a block and a *KeyLockedError for a
// statement, and takes none.
func (e *Engine) checkKeys(txn *Txn, rel *catalog.Relation, c *types.Chunk) error {
	if !e.keyLocks.anyHeld(rel.Table.ID) {
		return nil
	}
	return e.lockKeysOf(txn, rel, c, false)
}
