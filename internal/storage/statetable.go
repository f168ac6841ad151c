package storage

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/RaduBerinde/btreemap"
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

	// overlay maps full Pebble keys to the latest uncommitted write.
	overlay *btreemap.BTreeMap[string, *entry]
	// dirty holds the keys written since the last Seal.
	dirty []string
	// sealed holds, per sealed and not yet pruned epoch, the keys sealed in
	// it, oldest first.
	sealed     []sealedKeys
	lastSealed uint64
	openIters  int // pruning waits while iterators read the overlay
	keyScratch []byte
	pkScratch  types.Row // see scratchPK
	valScratch []byte
	prunedUpTo uint64
	rc         rowCounts // per-vnode row counts, when tracked
}

// entry is an uncommitted write: a row, or a tombstone when row is nil.
type entry struct {
	row   types.Row
	epoch uint64 // the epoch it was sealed in; 0 while unsealed
}

type sealedKeys struct {
	epoch uint64
	keys  []string
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
		overlay: btreemap.New[string, *entry](16, func(a, b string) int { return compareStrings(a, b) }),
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

// OwnsVNode reports whether the table writes vnode v.
func (t *StateTable) OwnsVNode(v uint16) bool {
	return t.vnodes == nil || t.vnodes.Get(int(v))
}

// Insert writes row (an upsert: it replaces any row with the same PK).
func (t *StateTable) Insert(row types.Row) error {
	if err := t.lay.checkRow(row); err != nil {
		return err
	}
	return t.write(t.scratchPK(row), slices.Clone(row))
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
	k := string(key)
	// One descent of the tree, not a lookup then an insert. The entry is
	// always replaced, never changed: a sealed one must be, because its
	// epoch's batch already holds its value and pruning checks its epoch.
	_, prev, found := t.overlay.ReplaceOrInsert(k, &entry{row: row})
	if !found || prev.epoch != 0 {
		// First write of this key since the last seal: remember to seal it.
		t.dirty = append(t.dirty, k)
	}
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
	t.maybePrune()
	key, err := t.keyOf(pk)
	if err != nil {
		return nil, false, err
	}
	if e, ok := t.overlayGet(key); ok {
		if e.row == nil {
			return nil, false, nil
		}
		return slices.Clone(e.row), true, nil
	}
	v, closer, err := t.store.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("storage: table %d get: %w", t.lay.desc.ID, err)
	}
	defer closer.Close()
	row, err := t.lay.decodeValue(v)
	return row, err == nil, err
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
	if len(t.dirty) == 0 && len(t.rc.dirty) == 0 {
		if err := t.store.checkSeal(epoch, t.lay.desc.ID, t.gen, t.dropGen); err != nil {
			return t.becomeBroken(err)
		}
		return nil
	}
	b := t.store.db.NewBatch()
	for _, k := range t.dirty {
		_, e, _ := t.overlay.Get(k)
		e.epoch = epoch
		var err error
		if e.row == nil {
			err = b.Delete([]byte(k), nil)
		} else {
			t.valScratch, err = t.lay.encodeValue(t.valScratch[:0], e.row)
			if err == nil {
				err = b.Set([]byte(k), t.valScratch, nil)
			}
		}
		if err != nil {
			_ = b.Close()
			return t.becomeBroken(err)
		}
	}
	if err := t.sealCounts(b); err != nil {
		_ = b.Close()
		return t.becomeBroken(err)
	}
	t.sealed = append(t.sealed, sealedKeys{epoch: epoch, keys: t.dirty})
	t.dirty = nil
	sb := &stagedBatch{owner: t.owner, table: t.lay.desc.ID, batch: b}
	if err := t.store.stage(epoch, sb, t.gen, t.dropGen); err != nil {
		sb.release()
		return t.becomeBroken(err)
	}
	return nil
}

// becomeBroken makes every later call fail: the overlay holds writes whose
// epoch was never staged, so neither committing nor reading them is sound.
func (t *StateTable) becomeBroken(err error) error {
	t.broken = fmt.Errorf("storage: table %d unusable after failed seal: %w", t.lay.desc.ID, err)
	return t.broken
}

// maybePrune drops overlay entries whose epoch is committed: Pebble has
// them now. It runs lazily on the owner's goroutine, never while an iterator
// is reading the overlay (that iterator's Pebble view may predate the
// commit).
func (t *StateTable) maybePrune() {
	c := t.store.committed.Load()
	if c <= t.prunedUpTo || t.openIters > 0 {
		return
	}
	t.prunedUpTo = c
	n := 0
	for _, sk := range t.sealed {
		if sk.epoch > c {
			break
		}
		for _, k := range sk.keys {
			// The key may have been rewritten since: only drop the entry
			// if it is still the one sealed in this epoch.
			if _, e, ok := t.overlay.Get(k); ok && e.epoch == sk.epoch {
				t.overlay.Delete(k)
			}
		}
		n++
	}
	t.sealed = t.sealed[n:]
}

// OverlayLen returns the number of uncommitted writes buffered; for tests
// and metrics.
func (t *StateTable) OverlayLen() int {
	t.maybePrune()
	return t.overlay.Len()
}
