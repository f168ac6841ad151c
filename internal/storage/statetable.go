package storage

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// StateTable is one actor's view of one table: it writes only the vnodes it
// owns, buffers writes in an overlay until their epoch commits, and reads
// the overlay merged over committed Pebble data. A StateTable belongs to one
// goroutine (its actor) and is not safe for concurrent use; different
// StateTables may be used concurrently.
type StateTable struct {
	store  *Store
	lay    *layout
	owner  ActorID
	vnodes types.Bitmap // nil = all
	owned  []uint16     // the owned vnodes, ascending

	gen, dropGen uint64
	broken       error // set when a seal failed; the table is unusable

	// overlay holds the uncommitted writes by full Pebble key (overlay.go).
	overlay    *overlay
	lastSealed uint64
	openIters  int // pruning waits while iterators read the overlay
	keyScratch []byte
	// delKeys is DeleteBetween's list of keys, kept for the next call
	// unless long (below.go).
	delKeys    []string
	stage      []byte    // a seal's fresh rows in key order (fresh_stage.go)
	pkScratch  types.Row // see scratchPK
	prunedUpTo uint64
	rc         rowCounts     // per-vnode row counts, when tracked
	fresh      []freshChunk  // uncommitted fresh inserts (statetable_fresh.go)
	freshHeld  *atomic.Int64 // their bytes in memory (fresh_memory.go)
	// keyedReads: writers look its rows up by key (a table with a primary
	// key: every INSERT's check), so its sealed fresh rows keep filters.
	keyedReads bool
	// spilled, when set, is given each buffer of fresh rows a spill let
	// go that no chunk still holds (BulkLoad reuses them).
	spilled func([]byte)
	// freshSince is when the unsealed epoch's first fresh rows came; pre
	// the files they were written to while it ran late (preseal.go),
	// which noPreseal (a bulk load's table) forbids.
	freshSince time.Time
	pre        *presealFiles
	noPreseal  bool
}

// OpenTable opens owner's state table for desc. vnodes lists the vnodes the
// actor owns (bit i set = vnode i); nil means all. A row outside them is an
// error (ErrVNodeNotOwned), because it means the dispatcher routed it to the
// wrong actor.
func (s *Store) OpenTable(desc TableDesc, owner ActorID, vnodes types.Bitmap) (*StateTable, error) {
	lay, err := newLayout(desc)
	if err != nil {
		return nil, err
	}
	t := &StateTable{
		store:   s,
		lay:     lay,
		owner:   owner,
		vnodes:  vnodes.Clone(),
		overlay: newOverlay(),
	}
	for v := range codec.VNodeCount {
		if vnodes == nil || vnodes.Get(v) {
			t.owned = append(t.owned, uint16(v))
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.closed {
		return nil, ErrClosed
	}
	t.gen = s.generation.Load()
	t.dropGen = s.mu.dropGen[desc.ID]
	t.prunedUpTo = s.committed.Load()
	return t, nil
}

// compareStrings is the overlay's key order. strings.Compare makes one pass
// over the common prefix; a < b then a > b made two for every key not less.
func compareStrings(a, b string) int { return strings.Compare(a, b) }

// Desc returns the table's descriptor.
func (t *StateTable) Desc() TableDesc { return t.lay.desc }

// PKOf returns a row's primary-key values, in key order; ScanFrom resumes
// after such a PK.
func (t *StateTable) PKOf(row types.Row) types.Row { return t.lay.pkOf(row) }

// CommittedEpoch returns the store's committed epoch.
func (t *StateTable) CommittedEpoch() uint64 { return t.store.CommittedEpoch() }

// OwnsVNode reports whether the table writes vnode v.
func (t *StateTable) OwnsVNode(v uint16) bool {
	return t.vnodes == nil || t.vnodes.Get(int(v))
}

// Insert writes row (an upsert: it replaces any row with the same PK).
func (t *StateTable) Insert(row types.Row) error {
	return t.InsertOwned(slices.Clone(row))
}

// InsertOwned is Insert of a row the table keeps itself, which the caller
// must not change after: a join side caches the row it stores, so a copy
// for the table held every stored row twice until its epoch committed
// (and copying was a twentieth of Nexmark q5's CPU).
func (t *StateTable) InsertOwned(row types.Row) error {
	if err := t.lay.checkRow(row); err != nil {
		return err
	}
	return t.write(t.scratchPK(row), row)
}

// InsertAbsent is Insert of a row whose key the table does not hold in its
// latest state: the writer checked (a table's DML, which its session
// checked under the table's write lock; a view's trusted insert). When no
// uncommitted write touched the key either, no layer holds it, and it is
// written as a fresh key: a bulk epoch's seal puts such keys in a file the
// commit ingests, not in its batch, which Pebble sorted again as a
// flushable batch (0.40 of a million-row COPY's 4.5 CPU s into a table
// with a primary key) and wrote to the WAL.
//
// The table keeps row itself, which the caller must not change after
// (the materialize hands over each row it decodes): a copy of every row
// of a bulk epoch was 67 of the 365 MB a two-million-row COPY held.
func (t *StateTable) InsertAbsent(row types.Row) error {
	if err := t.lay.checkRow(row); err != nil {
		return err
	}
	if t.broken != nil {
		return t.broken
	}
	t.maybePrune()
	key, err := t.keyOf(t.scratchPK(row))
	if err != nil {
		return err
	}
	h := t.overlay.keyHash(key)
	if _, ok := t.overlay.unsealedRowH(h, key); ok {
		t.overlay.putH(h, key, row) // deleted earlier this epoch
		return nil
	}
	if _, ok := t.overlay.sealedGetH(h, key); ok {
		t.overlay.putAbsentH(h, key, row) // deleted in an uncommitted epoch
		return nil
	}
	t.overlay.putFreshH(h, key, row)
	return nil
}

// Delete removes the row with row's PK.
func (t *StateTable) Delete(row types.Row) error {
	if len(row) != len(t.lay.desc.Types) {
		return fmt.Errorf("storage: table %d: row has %d columns, want %d", t.lay.desc.ID, len(row), len(t.lay.desc.Types))
	}
	return t.write(t.scratchPK(row), nil)
}

// Update replaces old with new; if the PK changed, old's key is deleted.
func (t *StateTable) Update(old, new types.Row) error {
	if err := t.lay.checkRow(new); err != nil {
		return err
	}
	if len(old) != len(new) {
		return fmt.Errorf("storage: table %d: update of rows with %d and %d columns", t.lay.desc.ID, len(old), len(new))
	}
	oldPK, newPK := t.lay.pkOf(old), t.lay.pkOf(new)
	if types.CompareRows(oldPK, newPK) != 0 {
		if err := t.write(oldPK, nil); err != nil {
			return err
		}
	}
	return t.write(newPK, slices.Clone(new))
}

// write records row (nil = tombstone) under pk in the overlay.
func (t *StateTable) write(pk, row types.Row) error {
	if t.broken != nil {
		return t.broken
	}
	t.maybePrune()
	key, err := t.keyOf(pk)
	if err != nil {
		return err
	}
	t.overlay.put(key, row)
	return nil
}

// keyOf returns the full key of a complete PK, checking vnode ownership. The
// result aliases a scratch buffer until the next call.
func (t *StateTable) keyOf(pk types.Row) ([]byte, error) {
	if len(pk) != len(t.lay.pkTypes) {
		return nil, fmt.Errorf("storage: table %d: pk has %d columns, want %d", t.lay.desc.ID, len(pk), len(t.lay.pkTypes))
	}
	vnode, _ := t.lay.vnodeOf(pk)
	if !t.OwnsVNode(vnode) {
		return nil, fmt.Errorf("storage: table %d vnode %d: %w", t.lay.desc.ID, vnode, ErrVNodeNotOwned)
	}
	key, err := t.lay.appendKey(t.keyScratch[:0], vnode, pk)
	t.keyScratch = key
	return key, err
}

// Get returns the row with primary key pk: the latest uncommitted write if
// there is one, else the committed row.
func (t *StateTable) Get(ctx context.Context, pk types.Row) (types.Row, bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	row, ok, key, done, err := t.getUncommitted(pk)
	if done || err != nil {
		return row, ok, err
	}
	// Through a pooled iterator: a key read here is often absent (a group
	// new to an aggregation), which its bloom filters answer (multiset.go).
	return t.store.pointGet(t.lay, key)
}

// GetUncommitted is Get for a caller that knows the key holds no committed
// row (an aggregate's multiset row of a group that has none): it reads only
// the table's uncommitted writes (overlay and fresh rows), never Pebble.
func (t *StateTable) GetUncommitted(pk types.Row) (types.Row, bool, error) {
	row, ok, _, _, err := t.getUncommitted(pk)
	return row, ok, err
}

// getUncommitted reads pk from the uncommitted writes: the overlay, then
// the fresh rows (older than any overlay write of the key). done says
// they decided (a row or a tombstone); otherwise key is pk's key, for
// the committed read.
func (t *StateTable) getUncommitted(pk types.Row) (row types.Row, ok bool, key []byte, done bool, err error) {
	t.maybePrune()
	if key, err = t.keyOf(pk); err != nil {
		return nil, false, nil, true, err
	}
	if e, found := t.overlayGet(key); found {
		if e.row == nil {
			return nil, false, key, true, nil
		}
		return slices.Clone(e.row), true, key, true, nil
	}
	if row, ok, err = t.freshGet(pk, key); ok || err != nil {
		return row, ok, key, true, err
	}
	return nil, false, key, false, nil
}

// Seal hands every write since the last Seal to the store as epoch's staged
// batch. The writes stay readable in the overlay until the store commits
// epoch. Epochs must increase; an epoch with no writes stages nothing.
func (t *StateTable) Seal(epoch uint64) error {
	if t.broken != nil {
		return t.broken
	}
	if epoch <= t.lastSealed {
		return fmt.Errorf("storage: table %d: seal of epoch %d after epoch %d", t.lay.desc.ID, epoch, t.lastSealed)
	}
	t.maybePrune()
	t.lastSealed = epoch
	t.freshSince = time.Time{}
	t.stampLoaded(epoch)
	if !t.overlay.hasUnsealed() && !t.hasUnsealedFresh() && len(t.rc.dirty) == 0 {
		if err := t.store.checkSeal(epoch, t.lay.desc.ID, t.gen, t.dropGen); err != nil {
			return t.becomeBroken(err)
		}
		return nil
	}
	sb := &stagedBatch{owner: t.owner, table: t.lay.desc.ID, fs: t.store.fs}
	if err := t.sealInto(sb, epoch); err != nil {
		sb.release()
		return t.becomeBroken(err)
	}
	if err := t.store.stage(epoch, sb, t.gen, t.dropGen); err != nil {
		sb.release()
		return t.becomeBroken(err)
	}
	return nil
}

// sealInto writes the writes since the last seal into sb: a bulk epoch's
// fresh rows and fresh keys into files, the rest into its batch.
func (t *StateTable) sealInto(sb *stagedBatch, epoch uint64) error {
	f, err := t.maybeSealFreshFile(epoch)
	if err != nil {
		return err
	}
	sb.addFile(f)
	t.stagePresealed(sb, epoch)
	_, vals, err := t.overlay.sealEncoded(epoch, t.lay.encodeValue)
	if err != nil {
		return err
	}
	byFile, f, err := t.maybeSealFreshItems(epoch, vals, t.overlay.sealedFresh())
	if err != nil {
		return err
	}
	sb.addFile(f)
	sb.batch = t.store.db.NewBatchWithSize(batchSize(vals, byFile) + t.freshSealedSize())
	// Fresh rows first: an overlay write of the same key is newer.
	if err := t.sealFresh(sb.batch, epoch); err != nil {
		return err
	}
	// In key order: Pebble's memtable inserts a sorted batch faster.
	if err := t.batchSealed(sb.batch, vals, byFile); err != nil {
		return err
	}
	return t.sealCounts(sb.batch)
}

// batchSize is the bytes of the batch holding the run's items that the
// file did not take (byFile).
func batchSize(vals *sealedKVs, byFile types.Bitmap) int {
	n := 1 << 10
	for j := range vals.len() {
		if !byFile.Get(j) {
			n += len(vals.entry(j)) + 16 // record header, value length
		}
	}
	return n
}

// batchSealed writes the run's items that the file did not take and
// that are not fresh keys deleted again (byFile) into b.
func (t *StateTable) batchSealed(b *pebble.Batch, vals *sealedKVs, byFile types.Bitmap) error {
	for j := range vals.len() {
		if byFile.Get(j) {
			continue
		}
		var err error
		if vals.tombstone(j) {
			err = b.Delete(vals.key(j), nil)
		} else {
			err = b.Set(vals.key(j), vals.value(j), nil)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// becomeBroken makes every later call fail: the overlay holds writes whose
// epoch was never staged, so neither committing nor reading them is sound.
func (t *StateTable) becomeBroken(err error) error {
	t.broken = fmt.Errorf("storage: table %d unusable after failed seal: %w", t.lay.desc.ID, err)
	return t.broken
}

// maybePrune drops the overlay's runs whose epoch is committed: Pebble has
// them now. It runs lazily on the owner's goroutine, never while an iterator
// is reading the overlay (that iterator's Pebble view may predate the
// commit).
func (t *StateTable) maybePrune() {
	c := t.store.committed.Load()
	if c <= t.prunedUpTo || t.openIters > 0 {
		return
	}
	t.prunedUpTo = c
	t.overlay.prune(c)
	t.pruneFresh(c)
}

// OverlayLen returns the number of uncommitted writes buffered (a key
// written in several uncommitted epochs counts once per epoch); for tests
// and metrics.
func (t *StateTable) OverlayLen() int {
	t.maybePrune()
	n := t.overlay.len()
	for _, fc := range t.fresh {
		n += fc.n
	}
	return n
}
