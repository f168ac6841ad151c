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
	k    string    // memcomparable group key, the cache key
	key  types.Row // group key values
	rows int64     // input rows in the group (deletes subtract)
	// states holds the running state of every call (unused by calls that
	// are only table-backed).
	states []runState
	// prev is the output (call columns) last emitted and persisted; nil
	// when the group has not been emitted (or was deleted).
	prev  types.Row
	dirty bool
}

// groups finds and loads groups: the epoch's dirty set first (it pins
// every group touched this epoch, whatever the cache evicts), then the LRU,
// then the result table.
type groups struct {
	result     *storage.StateTable
	cache      *storage.LRU[string, *group]
	dirty      []*group
	dirtyIdx   map[string]*group
	groupTypes []types.Type
	nCalls     int
	stateTypes []types.Type // the state blob's row types
	running    []int        // indexes of calls with running state
	keyBuf     []byte
}

func newGroups(result *storage.StateTable, cacheSize int, groupTypes []types.Type, calls []*callSpec) *groups {
	gs := &groups{
		result:     result,
		cache:      storage.NewLRU[string, *group](cacheSize),
		dirtyIdx:   make(map[string]*group),
		groupTypes: groupTypes,
		nCalls:     len(calls),
	}
	for i, c := range calls {
		if c.running {
			gs.running = append(gs.running, i)
			gs.stateTypes = append(gs.stateTypes, stateTypes...)
		}
	}
	return gs
}

// get returns the group of key, loading or creating it, and marks it dirty.
func (gs *groups) get(ctx context.Context, key types.Row) (*group, error) {
	kb, err := codec.EncodeKey(gs.keyBuf[:0], key, gs.groupTypes, nil)
	if err != nil {
		return nil, fmt.Errorf("agg: group key: %w", err)
	}
	gs.keyBuf = kb
	if g, ok := gs.dirtyIdx[string(kb)]; ok {
		return g, nil
	}
	k := string(kb)
	g, ok := gs.cache.Get(k)
	if !ok {
		if g, err = gs.load(ctx, k, slices.Clone(key)); err != nil {
			return nil, err
		}
		gs.cache.Put(k, g)
	}
	g.dirty = true
	gs.dirtyIdx[k] = g
	gs.dirty = append(gs.dirty, g)
	return g, nil
}

// load reads a group from the result table, or makes an empty one.
func (gs *groups) load(ctx context.Context, k string, key types.Row) (*group, error) {
	g := &group{k: k, key: key, states: make([]runState, gs.nCalls)}
	row, ok, err := gs.result.Get(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("agg: load group: %w", err)
	}
	if !ok {
		return g, nil
	}
	nG := len(gs.groupTypes)
	g.prev = row[nG : nG+gs.nCalls]
	g.rows, _ = row[nG+gs.nCalls].(int64)
	blob, _ := row[nG+gs.nCalls+1].([]byte)
	if err := gs.decodeStates(g, blob); err != nil {
		return nil, err
	}
	return g, nil
}

// decodeStates fills the running states from the result row's blob: the
// running calls' stateTypes rows, concatenated, in call order.
func (gs *groups) decodeStates(g *group, blob []byte) error {
	if len(gs.running) == 0 {
		return nil
	}
	r, err := codec.DecodeValue(blob, gs.stateTypes)
	if err != nil {
		return fmt.Errorf("agg: group state: %w", err)
	}
	w := len(stateTypes)
	for j, ci := range gs.running {
		if err := g.states[ci].setRow(r[j*w : (j+1)*w]); err != nil {
			return err
		}
	}
	return nil
}

func (gs *groups) encodeStates(g *group) ([]byte, error) {
	r := make(types.Row, 0, len(gs.stateTypes))
	for _, ci := range gs.running {
		r = append(r, g.states[ci].row()...)
	}
	b, err := codec.EncodeValue(nil, r, gs.stateTypes)
	if err != nil {
		return nil, fmt.Errorf("agg: encode group state: %w", err)
	}
	return b, nil
}

// persist writes the group's result row with out as its output.
func (gs *groups) persist(g *group, out types.Row) error {
	blob, err := gs.encodeStates(g)
	if err != nil {
		return err
	}
	row := make(types.Row, 0, len(g.key)+len(out)+2)
	row = append(append(append(row, g.key...), out...), g.rows, blob)
	if err := gs.result.Insert(row); err != nil {
		return fmt.Errorf("agg: persist group: %w", err)
	}
	return nil
}

// remove deletes a group whose rows are all gone.
func (gs *groups) remove(g *group) error {
	gs.cache.Delete(g.k)
	row := make(types.Row, len(g.key)+gs.nCalls+2)
	copy(row, g.key)
	if err := gs.result.Delete(row); err != nil {
		return fmt.Errorf("agg: remove group: %w", err)
	}
	return nil
}

// endEpoch forgets the epoch's dirty set after it was flushed.
func (gs *groups) endEpoch() {
	for _, g := range gs.dirty {
		g.dirty = false
	}
	gs.dirty = gs.dirty[:0]
	clear(gs.dirtyIdx)
}
