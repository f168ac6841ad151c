package agg

import (
	"context"
	"fmt"
	"slices"

	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// group is one group's state: the in-memory copy of its result-table row
// plus what changed in the current epoch.
type group struct {
	// k is the group's index key (see groupkey.go), the cache key; made
	// only when needed for a group found by its int key values ik
	// (groupints.go).
	k    string
	ik   [2]int64
	key  types.Row // group key values
	rows int64     // input rows in the group (deletes subtract)
	// states holds the running state of every call (unused by calls that
	// are only table-backed).
	states []runState
	// prev is the output (call columns) last emitted and persisted; nil
	// when the group has not been emitted (or was deleted). spare is where
	// the next output is computed; when it differs from prev the two swap,
	// so a group reaching a steady state allocates no output rows.
	prev  types.Row
	spare types.Row
	// ext holds each min and max call's current extreme (extreme.go); nil
	// when the aggregate has none.
	ext []extreme
	// pend holds, per call, the values waiting to be written (pending.go);
	// nil when none has waited this epoch.
	pend []pendingVals
	// The flags, together so they share a word.
	intKey bool // found by ik (groupints.go)
	dirty  bool
	boxed  bool // allocated in a groupBox, so recycle may keep it
	// cache: the group goes (back) into the LRU when its epoch ends. It
	// is set when the flush writes its row and cleared when the row is
	// deleted; a dirty group stays out of the LRU until then.
	cache bool
	// isNew: the group had no row in the result table when it was loaded
	// this epoch, so its multisets have no committed rows either (they are
	// written and deleted with the result row). Cleared at the flush.
	isNew bool
}

// groupBox holds a group of one call and at most two keys with its call
// state and its key in one allocation (most windowed aggregations: a
// count by window and key).
type groupBox struct {
	g   group
	st  [1]runState
	key [2]types.Datum
}

// newGroup returns an empty group with a copy of key.
func (gs *groups) newGroup(key types.Row) *group {
	if gs.nCalls != 1 || len(key) > 2 {
		return &group{key: slices.Clone(key), states: make([]runState, gs.nCalls)}
	}
	if n := len(gs.free); n > 0 {
		g := gs.free[n-1]
		gs.free[n-1] = nil
		gs.free = gs.free[:n-1]
		g.key = g.key[:len(key):len(key)]
		copy(g.key, key)
		return g
	}
	b := &groupBox{}
	g := &b.g
	g.states, g.boxed = b.st[:], true
	g.key = b.key[:len(key):len(key)]
	copy(g.key, key)
	return g
}

// recycle keeps a boxed group that nothing refers to any more (a group
// closeEarly finished: out of the epoch's maps, the dirty list and the
// LRU) for the next newGroup. A windowed aggregation makes and finishes
// most of its groups within an epoch (Nexmark q5: 150 000 per actor), and
// allocating each afresh, on memory the collector had to clear or the
// kernel to fault in, was a tenth of its CPU. Its output row, if any, is
// kept as the next output's scratch.
func (gs *groups) recycle(g *group) {
	if !g.boxed || len(gs.free) >= maxFreeGroups {
		return
	}
	spare := g.prev
	if spare == nil {
		spare = g.spare
	}
	clear(spare)
	ext := g.ext
	clear(ext)
	key, st := g.key[:cap(g.key)], g.states
	clear(key)
	clear(st)
	*g = group{key: key[:0], states: st, spare: spare, ext: ext, boxed: true}
	gs.free = append(gs.free, g)
}

// maxFreeGroups bounds the groups recycle keeps: about one epoch's worth
// of a busy windowed aggregation's closed groups.
const maxFreeGroups = 1 << 16

// groups finds and loads groups: the epoch's dirty groups first, then the
// LRU of clean ones, then the result table.
//
// A dirty group is found by key in epoch, not in the LRU: a windowed
// aggregation touches more groups in an epoch than the LRU holds (Nexmark
// q5: 150 000 groups per actor in one epoch of a 65 536-group cache), and
// the LRU's evictions of groups pinned as dirty anyway, its reordering on
// every hit and a second map for the evicted dirty groups cost more than
// a fifth of q5's aggregation. The groups that stay go into the LRU when
// the epoch ends; the many a closed window drops never do.
type groups struct {
	result *storage.StateTable
	cache  *storage.LRU[string, *group]
	dirty  []*group
	free   []*group // finished groups for newGroup (recycle)
	// dirtyFirst holds, in int-keyed groups, each dirty group's first
	// key value (firstInt), at its index in dirty (closeEarly).
	dirtyFirst []int64
	// epoch holds the dirty groups by key until the epoch ends; those
	// found by their int key values are in epochInts instead
	// (groupints.go).
	epoch      map[string]*group
	epochInts  map[[2]int64]*group
	intKeyed   bool
	ints       intCols // the current chunk's key columns
	groupTypes []types.Type
	nCalls     int
	extremes   []int        // indexes of min and max calls, kept or not
	stateTypes []types.Type // the state blob's row types
	running    []int        // indexes of calls with running state
	keyBuf     []byte
	// valueKey: the group index key is the key's value encoding rather
	// than its memcomparable one (see exactKeyTypes); keyRow is scratch
	// for boxing a key from columns.
	valueKey bool
	keyRow   types.Row
	// Scratch reused group after group: stateCols holds one row of
	// stateTypes per running call; blobBuf its encoding; arena the
	// encodings handed to the result table; rowBuf a result row.
	stateCols []types.Column
	blobBuf   []byte
	arena     []byte
	rowBuf    types.Row
	// complete: every stored group is cached or in evicted, so any other
	// miss is a new group (complete.go); checked once the table was
	// looked at.
	complete, checked bool
	evicted           map[string]struct{}
}

func newGroups(result *storage.StateTable, cacheSize int, groupTypes []types.Type, calls []*callSpec) *groups {
	gs := &groups{
		result:     result,
		cache:      storage.NewLRU[string, *group](cacheSize),
		epoch:      make(map[string]*group),
		epochInts:  make(map[[2]int64]*group),
		groupTypes: groupTypes,
		nCalls:     len(calls),
	}
	for i, c := range calls {
		if isExtremeCall(c) || c.kept {
			gs.extremes = append(gs.extremes, i)
		}
		if c.running {
			gs.running = append(gs.running, i)
			gs.stateTypes = append(gs.stateTypes, stateTypes...)
		}
	}
	gs.valueKey = exactKeyTypes(groupTypes)
	gs.intKeyed = intKeyTypes(groupTypes)
	gs.keyRow = make(types.Row, len(groupTypes))
	for _, t := range gs.stateTypes {
		gs.stateCols = append(gs.stateCols, types.MustColumn(t, 1))
	}
	gs.cache.OnEvict(gs.onEvict)
	return gs
}

// get returns the group of key, loading or creating it, and marks it dirty.
func (gs *groups) get(ctx context.Context, key types.Row) (*group, error) {
	if ik, ok := gs.intKeyOf(key); ok {
		return gs.getInt(ctx, ik, key, nil, 0)
	}
	kb, err := gs.rowKey(key)
	if err != nil {
		return nil, err
	}
	if g := gs.hit(kb); g != nil {
		return g, nil
	}
	return gs.miss(ctx, kb, key)
}

// hit returns the group whose index key is kb if it is dirty or cached
// (marking it dirty), else nil. It allocates nothing: the lookups convert
// kb without copying.
func (gs *groups) hit(kb []byte) *group {
	if g := gs.epoch[string(kb)]; g != nil {
		return g
	}
	g, ok := gs.cache.Get(string(kb))
	if !ok {
		return nil
	}
	gs.markDirty(g)
	return g
}

// miss loads (or creates) the group of key, index key kb, and marks it
// dirty.
func (gs *groups) miss(ctx context.Context, kb []byte, key types.Row) (*group, error) {
	k := string(kb)
	g, err := gs.load(ctx, kb, key)
	if err != nil {
		return nil, err
	}
	g.k = k
	gs.markDirty(g)
	return g, nil
}

func (gs *groups) markDirty(g *group) {
	g.dirty = true
	gs.dirty = append(gs.dirty, g)
	if gs.intKeyed {
		gs.dirtyFirst = append(gs.dirtyFirst, gs.firstInt(g))
	}
	if g.intKey {
		gs.epochInts[g.ik] = g
	} else {
		gs.epoch[g.k] = g
	}
}

// indexKey returns g's index key, making it if it was found by its int
// key values.
func (gs *groups) indexKey(g *group) (string, error) {
	if g.intKey && g.k == "" {
		kb, err := gs.rowKey(g.key)
		if err != nil {
			return "", err
		}
		g.k = string(kb)
	}
	return g.k, nil
}

// load reads a group from the result table, or makes an empty one. kb is
// its index key, or nil if not made yet (the int path); key is copied.
func (gs *groups) load(ctx context.Context, kb []byte, key types.Row) (*group, error) {
	g := gs.newGroup(key)
	key = g.key
	if len(gs.extremes) > 0 && len(g.ext) != gs.nCalls {
		g.ext = make([]extreme, gs.nCalls)
	}
	if !gs.checked {
		if err := gs.checkComplete(ctx); err != nil {
			return nil, err
		}
	}
	var row types.Row
	ok := false
	stored, err := gs.mayBeStored(kb, key)
	if err != nil {
		return nil, err
	}
	if stored {
		if row, ok, err = gs.result.Get(ctx, key); err != nil {
			return nil, fmt.Errorf("agg: load group: %w", err)
		}
	}
	if !ok {
		g.isNew = true
		for _, ci := range gs.extremes {
			g.setExtreme(ci, nil) // no result row, no value rows
		}
		return g, nil
	}
	nG := len(gs.groupTypes)
	// A copy: the row may share its backing array with the state blob,
	// which can sit in a 32 KiB arena the group must not keep alive.
	g.prev = slices.Clone(row[nG : nG+gs.nCalls])
	for _, ci := range gs.extremes {
		g.setExtreme(ci, g.prev[ci]) // the extreme it last persisted
	}
	g.rows, _ = row[nG+gs.nCalls].(int64)
	blob, _ := row[nG+gs.nCalls+1].([]byte)
	if err := gs.decodeStates(g, blob); err != nil {
		return nil, err
	}
	return g, nil
}

// decodeStates fills the running states from the result row's blob: the
// running calls' stateTypes rows, concatenated, in call order. The blob is
// decoded into the one-row state columns, so nothing is boxed.
func (gs *groups) decodeStates(g *group, blob []byte) error {
	if len(gs.running) == 0 {
		return nil
	}
	gs.resetStateCols()
	if err := codec.DecodeValueInto(blob, gs.stateTypes, gs.stateCols); err != nil {
		return fmt.Errorf("agg: group state: %w", err)
	}
	w := len(stateTypes)
	for j, ci := range gs.running {
		g.states[ci].setFromColumns(gs.stateCols[j*w : (j+1)*w])
	}
	return nil
}

// encodeStates returns the value encoding of g's running states (a row of
// stateTypes per running call). The bytes are carved from gs.arena: the
// result table keeps them in its overlay until the epoch commits, so each
// group needs its own bytes, but not its own allocation.
func (gs *groups) encodeStates(g *group) ([]byte, error) {
	gs.resetStateCols()
	w := len(stateTypes)
	for j, ci := range gs.running {
		g.states[ci].appendToColumns(gs.stateCols[j*w : (j+1)*w])
	}
	b, err := codec.EncodeValueColumns(gs.blobBuf[:0], gs.stateCols, 0)
	if err != nil {
		return nil, fmt.Errorf("agg: encode group state: %w", err)
	}
	gs.blobBuf = b
	return gs.carve(b), nil
}

func (gs *groups) resetStateCols() {
	for _, c := range gs.stateCols {
		c.Reset()
	}
}

// arenaSize is the size of one blob arena: big enough that a flush of many
// groups allocates rarely, small enough that an arena pinned by one
// uncommitted blob wastes little.
const arenaSize = 32 << 10

// carve copies b into the arena and returns the copy, capped so that an
// append to it cannot overwrite its neighbour.
func (gs *groups) carve(b []byte) []byte {
	if cap(gs.arena)-len(gs.arena) < len(b) {
		gs.arena = make([]byte, 0, max(arenaSize, len(b)))
	}
	n := len(gs.arena)
	gs.arena = append(gs.arena, b...)
	return gs.arena[n : n+len(b) : n+len(b)]
}

// persist writes the group's result row with out as its output. The row is
// scratch: the table copies it (not the datums, which are never mutated).
func (gs *groups) persist(g *group, out types.Row) error {
	blob, err := gs.encodeStates(g)
	if err != nil {
		return err
	}
	row := gs.rowBuf[:0]
	row = append(append(append(row, g.key...), out...), g.rows, blob)
	gs.rowBuf = row
	if g.isNew {
		// No layer holds the key: a row deleted again within the epoch
		// (its window closed) then reaches no file and no batch.
		err = gs.result.InsertAbsent(slices.Clone(row))
	} else {
		err = gs.result.Insert(row)
	}
	clear(row) // drop references to the datums
	if err != nil {
		return fmt.Errorf("agg: persist group: %w", err)
	}
	g.cache = true
	return nil
}

// remove deletes a group whose rows are all gone.
func (gs *groups) remove(g *group) error {
	if err := gs.forgetGroup(g); err != nil {
		return err
	}
	row := append(gs.rowBuf[:0], g.key...)
	for range gs.nCalls + 2 {
		row = append(row, nil)
	}
	gs.rowBuf = row
	err := gs.result.Delete(row)
	clear(row)
	if err != nil {
		return fmt.Errorf("agg: remove group: %w", err)
	}
	return nil
}

// drop forgets a group its window closed: it deletes the group's row,
// unless the group is new this epoch and so has none.
func (gs *groups) drop(g *group) error {
	if !g.isNew {
		return gs.remove(g)
	}
	return gs.forgetGroup(g)
}

// endEpoch forgets the epoch's dirty set after it was flushed; the
// groups whose rows it wrote (and did not delete) go into the LRU.
func (gs *groups) endEpoch() error {
	for i, g := range gs.dirty {
		if g.cache {
			k, err := gs.indexKey(g)
			if err != nil {
				return err
			}
			gs.cache.Put(k, g)
		}
		g.dirty, g.isNew, g.pend, g.cache = false, false, nil, false
		gs.dirty[i] = nil
	}
	gs.dirty, gs.dirtyFirst = gs.dirty[:0], gs.dirtyFirst[:0]
	clear(gs.epoch)
	clear(gs.epochInts)
	return nil
}
