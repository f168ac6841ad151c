package session

import (
	"cmp"
	"context"
	"slices"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// A bulk statement into a table keyed by one bigint whose keys come in no
// order (INSERT … SELECT over a table scanned vnode by vnode, a COPY of
// shuffled ids) kept every key in a map to find one proposed twice (72
// bytes a key), and its rows reached the table's materialize out of
// order, which then boxed each in its overlay until the seal (about 125
// bytes a row): 746 MB of RSS for two million rows. So such a statement
// sorts each piece by its key before preparing it (sortPiece): each
// record of the log then rises, the materialize keeps its rows encoded
// as fresh runs (which the store spills and merges), and the statement's
// keys are kept as plain int64s, sorted once at the end when the pieces
// did not rise one after another (intKeys).

// statementKeys finds a key a bulk statement proposes twice: propose sees
// each piece once prepared (its keys as stored), finish the end.
type statementKeys interface {
	propose(ctx context.Context, c *types.Chunk) error
	finish() error
}

// newStatementKeys returns rel's statementKeys, and the column a piece is
// sorted by (-1: none): intKeys for a key of one bigint, else the encoded
// keys of proposedKeys.
func newStatementKeys(rel *catalog.Relation) (statementKeys, int) {
	if len(rel.PK) == 1 && rel.Columns[rel.PK[0]].Type == types.TInt64 {
		return &intKeys{rel: rel, col: rel.PK[0], rising: true}, rel.PK[0]
	}
	return &mapKeys{keys: newPKReader(rel), proposed: newProposedKeys(copyPieceRows)}, -1
}

// mapKeys checks each key as it comes (proposedKeys).
type mapKeys struct {
	keys     *pkReader
	proposed *proposedKeys
}

func (m *mapKeys) propose(ctx context.Context, c *types.Chunk) error {
	return proposeKeys(ctx, m.keys, m.proposed, c)
}

func (m *mapKeys) finish() error { return nil }

// intKeys keeps the keys of a key of one bigint, column col.
type intKeys struct {
	rel    *catalog.Relation
	col    int
	keys   []int64
	rising bool // each key above the one before: none repeats
}

func (k *intKeys) propose(_ context.Context, c *types.Chunk) error {
	vec, ok := c.Cols[k.col].(*types.Vec[int64])
	if !ok || c.HasVisibility() {
		return errNotInt64Key
	}
	for i, v := range vec.Vals {
		if vec.Nulls.Get(i) {
			return errNotInt64Key // Prepare refuses a NULL key first
		}
		if i > 0 && v == vec.Vals[i-1] {
			// A sorted piece shows its own repeats at once.
			return newPKReader(k.rel).duplicate(types.Row{v})
		}
		if k.rising && len(k.keys) > 0 && v <= k.keys[len(k.keys)-1] {
			k.rising = false
		}
		k.keys = append(k.keys, v)
	}
	return nil
}

// errNotInt64Key is a bug: a piece whose key column is not the bigint
// vector newStatementKeys saw.
var errNotInt64Key = sqlerr.New(sqlerr.Internal, "bulk statement: a piece's key column is not a bigint vector")

// finish sorts the keys, when they did not rise, to find one twice: one
// in two pieces whose keys overlap (a repeat within a piece, sorted, is
// found as it is proposed).
func (k *intKeys) finish() error {
	if k.rising {
		return nil
	}
	slices.Sort(k.keys)
	k.rising = true // sorted now
	for i := 1; i < len(k.keys); i++ {
		if k.keys[i] == k.keys[i-1] {
			return newPKReader(k.rel).duplicate(types.Row{k.keys[i]})
		}
	}
	return nil
}

// sortPiece returns c with its rows in rising order of bigint column col,
// or c itself when they rise already (or col holds a NULL: Prepare then
// refuses the piece).
func sortPiece(c *types.Chunk, col int) *types.Chunk {
	vec, ok := c.Cols[col].(*types.Vec[int64])
	if !ok || c.HasVisibility() || vec.Nulls.Any() {
		return c
	}
	vals := vec.Vals
	sorted := true
	for i := 1; i < len(vals) && sorted; i++ {
		sorted = vals[i] >= vals[i-1]
	}
	if sorted {
		return c
	}
	idx := make([]int, len(vals))
	for i := range idx {
		idx[i] = i
	}
	// Stable: an update pair keeps its order.
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(vals[a], vals[b]) })
	return gatherRows(c, idx)
}

// gatherRows returns a new chunk of c's rows idx, in that order.
func gatherRows(c *types.Chunk, idx []int) *types.Chunk {
	cols := make([]types.Column, len(c.Cols))
	for j, col := range c.Cols {
		cols[j] = col.Gather(idx)
	}
	ops := make([]types.Op, len(idx))
	for j, i := range idx {
		ops[j] = c.Ops[i]
	}
	return types.NewChunk(cols, ops)
}
