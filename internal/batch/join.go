package batch

import (
	"context"
	"slices"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// hashJoin is the state of one HashJoin: the built right side, which right
// rows have matched (for right and full joins), and the probe's buffers.
type hashJoin struct {
	x        *executor
	j        *plan.HashJoin
	lt, rt   []types.Type
	keyTypes []types.Type
	residual expr.Expr // nil: keys decide alone

	right    []types.Row
	table    map[string][]int
	rMatched []bool

	pairs   *types.Builder // candidate rows: left ++ right
	pairIdx [][2]int       // (left row in its chunk, right row) per candidate
	out     *types.Builder
}

// join builds a hash table over the right input, then streams the left
// input through it. Candidate pairs are checked against the residual a
// chunk at a time (strictly); outer joins pad unmatched rows with NULLs.
func (x *executor) join(ctx context.Context, n *plan.Node, emit emitFunc) error {
	h := &hashJoin{x: x, j: n.HashJoin, lt: n.Inputs[0].Schema, rt: n.Inputs[1].Schema, table: map[string][]int{}}
	h.keyTypes = joinKeyTypes(h.j, h.lt, h.rt)
	all := slices.Concat(h.lt, h.rt)
	if h.j.Residual != nil {
		e, err := expr.Build(*h.j.Residual, all)
		if err != nil {
			return err
		}
		h.residual = e
	}
	h.pairs = types.NewBuilder(all, x.size)
	h.out = types.NewBuilder(n.Schema, x.size)
	if err := x.run(ctx, n.Inputs[1], h.build); err != nil {
		return err
	}
	h.rMatched = make([]bool, len(h.right))
	if err := x.run(ctx, n.Inputs[0], func(ctx context.Context, c *types.Chunk) error {
		return h.probe(ctx, c, emit)
	}); err != nil {
		return err
	}
	if t := h.j.Type; t == plan.RightJoin || t == plan.FullJoin {
		pad := make(types.Row, len(h.lt))
		for i, r := range h.right {
			if h.rMatched[i] {
				continue
			}
			if err := send(ctx, emit, h.out.Append(types.Insert, pick(slices.Concat(pad, r), h.j.Output))); err != nil {
				return err
			}
		}
	}
	return send(ctx, emit, h.out.Take())
}

// joinKeyTypes picks one type per key for hashing both sides: integers of
// different widths are all int64 datums, so they hash as bigint.
func joinKeyTypes(j *plan.HashJoin, lt, rt []types.Type) []types.Type {
	ts := make([]types.Type, len(j.LeftKeys))
	for k := range ts {
		l, r := lt[j.LeftKeys[k]], rt[j.RightKeys[k]]
		ts[k] = l
		if l != r && l.IsInteger() && r.IsInteger() {
			ts[k] = types.TInt64
		}
	}
	return ts
}

// key returns r's join key; ok is false when a key column is NULL and not
// compared null-safely (such a row matches nothing).
func (h *hashJoin) key(r types.Row, cols []int) (string, bool, error) {
	k := pick(r, cols)
	for i, d := range k {
		if d == nil && (i >= len(h.j.NullSafe) || !h.j.NullSafe[i]) {
			return "", false, nil
		}
	}
	b, err := codec.EncodeKey(nil, k, h.keyTypes, nil)
	return string(b), err == nil, err
}

func (h *hashJoin) build(_ context.Context, c *types.Chunk) error {
	for i := 0; i < c.Capacity(); i++ {
		r := c.Row(i)
		k, ok, err := h.key(r, h.j.RightKeys)
		if err != nil {
			return err
		}
		if err := h.x.keep(rowBytes(r) + int64(len(k)) + 16); err != nil {
			return err
		}
		if ok {
			h.table[k] = append(h.table[k], len(h.right))
		}
		h.right = append(h.right, r)
	}
	return nil
}

// probe joins one left chunk.
func (h *hashJoin) probe(ctx context.Context, c *types.Chunk, emit emitFunc) error {
	lMatched := make([]bool, c.Capacity())
	for i := 0; i < c.Capacity(); i++ {
		l := c.Row(i)
		k, ok, err := h.key(l, h.j.LeftKeys)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		for _, ri := range h.table[k] {
			h.pairIdx = append(h.pairIdx, [2]int{i, ri})
			if full := h.pairs.Append(types.Insert, slices.Concat(l, h.right[ri])); full != nil {
				if err := h.checkPairs(ctx, full, lMatched, emit); err != nil {
					return err
				}
			}
		}
	}
	if err := h.checkPairs(ctx, h.pairs.Take(), lMatched, emit); err != nil {
		return err
	}
	if t := h.j.Type; t == plan.LeftJoin || t == plan.FullJoin {
		pad := make(types.Row, len(h.rt))
		for i, m := range lMatched {
			if m {
				continue
			}
			if err := send(ctx, emit, h.out.Append(types.Insert, pick(slices.Concat(c.Row(i), pad), h.j.Output))); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkPairs applies the residual to a chunk of candidate pairs and emits
// the matches.
func (h *hashJoin) checkPairs(ctx context.Context, pc *types.Chunk, lMatched []bool, emit emitFunc) error {
	if pc == nil {
		return nil
	}
	idx := h.pairIdx
	h.pairIdx = nil
	var pass []int
	if h.residual == nil {
		pass = make([]int, pc.Capacity())
		for i := range pass {
			pass[i] = i
		}
	} else {
		var err error
		if pass, err = h.x.trueRows(h.residual, pc); err != nil {
			return err
		}
	}
	for _, p := range pass {
		lMatched[idx[p][0]] = true
		h.rMatched[idx[p][1]] = true
		if err := send(ctx, emit, h.out.Append(types.Insert, pick(pc.Row(p), h.j.Output))); err != nil {
			return err
		}
	}
	return nil
}
