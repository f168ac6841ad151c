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
// Past memory it partitions both sides instead (joinspill.go).
type hashJoin struct {
	x        *executor
	j        *plan.HashJoin
	lt, rt   []types.Type
	keyTypes []types.Type
	residual expr.Expr // nil: keys decide alone
	out      []types.Type
	depth    int // how many partitionings this join is under

	right    []types.Row
	table    map[string][]int
	rMatched []bool
	held     int64 // what the build side keeps

	pairs   *types.Builder // candidate rows: left ++ right
	pairIdx [][2]int       // (left row in its chunk, right row) per candidate
	bld     *types.Builder

	emit           emitFunc
	rSpill, lSpill *partitionSet
}

// join builds a hash table over the right input, then streams the left
// input through it. Candidate pairs are checked against the residual a
// chunk at a time (strictly); outer joins pad unmatched rows with NULLs.
func (x *executor) join(ctx context.Context, n *plan.Node, emit emitFunc) error {
	h := &hashJoin{x: x, j: n.HashJoin, lt: n.Inputs[0].Schema, rt: n.Inputs[1].Schema, out: n.Schema}
	h.keyTypes = joinKeyTypes(h.j, h.lt, h.rt)
	if h.j.Residual != nil {
		e, err := expr.Build(*h.j.Residual, slices.Concat(h.lt, h.rt))
		if err != nil {
			return err
		}
		h.residual = e
	}
	return h.runAll(ctx, emit,
		func(add emitFunc) error { return x.run(ctx, n.Inputs[1], add) },
		func(add emitFunc) error { return x.run(ctx, n.Inputs[0], add) })
}

// runAll joins the rows probe gives with those build gives.
func (h *hashJoin) runAll(ctx context.Context, emit emitFunc, build, probe func(emitFunc) error) error {
	defer h.closeSpill()
	h.emit, h.table = emit, map[string][]int{}
	h.pairs = types.NewBuilder(slices.Concat(h.lt, h.rt), h.x.size)
	h.bld = types.NewBuilder(h.out, h.x.size)
	if err := build(h.build); err != nil {
		return err
	}
	if h.rSpill != nil {
		return h.joinPartitions(ctx, probe)
	}
	h.rMatched = make([]bool, len(h.right))
	if err := probe(h.probe); err != nil {
		return err
	}
	if t := h.j.Type; t == plan.RightJoin || t == plan.FullJoin {
		for i, r := range h.right {
			if h.rMatched[i] {
				continue
			}
			if err := h.emitPadded(ctx, nil, r); err != nil {
				return err
			}
		}
	}
	h.x.release(h.held)
	h.right, h.table, h.held = nil, nil, 0
	return send(ctx, emit, h.bld.Take())
}

// emitPadded emits an unmatched row of one side, the other side NULL.
func (h *hashJoin) emitPadded(ctx context.Context, l, r types.Row) error {
	if l == nil {
		l = make(types.Row, len(h.lt))
	}
	if r == nil {
		r = make(types.Row, len(h.rt))
	}
	return send(ctx, h.emit, h.bld.Append(types.Insert, pick(slices.Concat(l, r), h.j.Output)))
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

func (h *hashJoin) build(ctx context.Context, c *types.Chunk) error {
	for i := 0; i < c.Capacity(); i++ {
		r := c.Row(i)
		k, ok, err := h.key(r, h.j.RightKeys)
		if err != nil {
			return err
		}
		n := rowBytes(r) + int64(len(k)) + 16
		if h.rSpill == nil && h.x.maySpill(h.depth, h.held, n) {
			if err := h.startSpill(ctx); err != nil {
				return err
			}
		}
		if h.rSpill != nil {
			if err := h.spillRight(ctx, k, ok, r); err != nil {
				return err
			}
			continue
		}
		if err := h.x.keep(n); err != nil {
			return err
		}
		h.held += n
		if ok {
			h.table[k] = append(h.table[k], len(h.right))
		}
		h.right = append(h.right, r)
	}
	return nil
}

// probe joins one left chunk.
func (h *hashJoin) probe(ctx context.Context, c *types.Chunk) error {
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
				if err := h.checkPairs(ctx, full, lMatched); err != nil {
					return err
				}
			}
		}
	}
	if err := h.checkPairs(ctx, h.pairs.Take(), lMatched); err != nil {
		return err
	}
	if t := h.j.Type; t == plan.LeftJoin || t == plan.FullJoin {
		for i, m := range lMatched {
			if m {
				continue
			}
			if err := h.emitPadded(ctx, c.Row(i), nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkPairs applies the residual to a chunk of candidate pairs and emits
// the matches.
func (h *hashJoin) checkPairs(ctx context.Context, pc *types.Chunk, lMatched []bool) error {
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
		if err := send(ctx, h.emit, h.bld.Append(types.Insert, pick(pc.Row(p), h.j.Output))); err != nil {
			return err
		}
	}
	return nil
}
