package agg

import (
	"cmp"
	"context"
	"fmt"
	"unsafe"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// LocalAgg is the first phase of a two-phase aggregation
// (plan.SplitLocalAggs): it aggregates each input chunk by the group keys
// and emits one row per group of the chunk, the group keys then a partial
// per call (a count, or the extreme of min and max), which the hash
// aggregation after the exchange combines. It keeps no state: nothing
// outlives a chunk, so barriers pass at once. Its input only inserts; a
// delete is an error.
type LocalAgg struct {
	input    stream.Executor
	keys     []int
	calls    []plan.AggCall
	schema   []types.Type
	keyTypes []types.Type
	exact    bool // value-encoded group keys (exactKeyTypes)
	// wmOut maps an input column to the output columns of the group keys
	// it is; wms holds watermarks not yet returned.
	wmOut map[int][]int
	wms   []*stream.Watermark

	// Per chunk: groups by encoded key; first row of each group; per
	// call, each group's count or the row holding its extreme (-1: none
	// yet, or all NULL).
	index map[string]int32
	// ints indexes the groups instead of index when the chunk's keys are
	// one or two int64-backed columns without NULLs (intKeys).
	ints   map[[2]int64]int32
	first  []int
	counts [][]int64
	best   [][]int
	keyBuf []byte
	keyRow types.Row
}

func newLocalAgg(input stream.Executor, n *plan.Agg) (*LocalAgg, error) {
	in := input.Schema()
	l := &LocalAgg{input: input, keys: n.GroupKeys, calls: n.Calls, index: make(map[string]int32),
		ints: make(map[[2]int64]int32), wmOut: map[int][]int{}}
	for j, k := range n.GroupKeys {
		if k < 0 || k >= len(in) {
			return nil, fmt.Errorf("agg: local group key %d out of range [0,%d)", k, len(in))
		}
		l.keyTypes = append(l.keyTypes, in[k])
		l.wmOut[k] = append(l.wmOut[k], j)
	}
	l.schema = append(l.schema, l.keyTypes...)
	for _, c := range n.Calls {
		if err := checkLocalCall(c, in); err != nil {
			return nil, err
		}
		l.schema = append(l.schema, c.Type)
	}
	l.exact = exactKeyTypes(l.keyTypes)
	l.keyRow = make(types.Row, len(l.keys))
	l.counts = make([][]int64, len(n.Calls))
	l.best = make([][]int, len(n.Calls))
	return l, nil
}

func checkLocalCall(c plan.AggCall, in []types.Type) error {
	if c.Distinct || c.Filter != nil || len(c.OrderBy) > 0 {
		return fmt.Errorf("agg: local %s with DISTINCT, FILTER or ORDER BY", c.Kind)
	}
	for _, a := range c.Args {
		if a < 0 || a >= len(in) {
			return fmt.Errorf("agg: local %s argument %d out of range [0,%d)", c.Kind, a, len(in))
		}
	}
	switch c.Kind {
	case plan.AggCountStar:
		if len(c.Args) == 0 && c.Type == types.TInt64 {
			return nil
		}
	case plan.AggCount:
		if len(c.Args) == 1 && c.Type == types.TInt64 {
			return nil
		}
	case plan.AggMin, plan.AggMax:
		if len(c.Args) == 1 && c.Type == in[c.Args[0]] {
			return nil
		}
	}
	return fmt.Errorf("agg: %s cannot be aggregated locally", c.Kind)
}

// Schema returns the group keys' types then the partials'.
func (l *LocalAgg) Schema() []types.Type { return l.schema }

// Next aggregates the next chunk with rows; a watermark on a group key
// becomes one on each output column of that key, others are dropped;
// barriers pass.
func (l *LocalAgg) Next(ctx context.Context) (stream.Message, error) {
	for {
		if len(l.wms) > 0 {
			w := l.wms[0]
			l.wms = l.wms[1:]
			return stream.Message{Watermark: w}, nil
		}
		msg, err := l.input.Next(ctx)
		if err != nil {
			return stream.Message{}, err
		}
		switch {
		case msg.Chunk != nil:
			out, err := l.aggregate(msg.Chunk)
			if err != nil || out != nil {
				return stream.ChunkMsg(out), err
			}
			continue
		case msg.Watermark != nil:
			for _, j := range l.wmOut[msg.Watermark.Col] {
				l.wms = append(l.wms, &stream.Watermark{Col: j, Value: msg.Watermark.Value})
			}
			continue
		case msg.Fresh != nil:
			return stream.Message{}, fmt.Errorf("agg: fresh rows reached a local aggregation")
		}
		return msg, nil
	}
}

// aggregate returns c's groups with their partials, or nil for no rows.
func (l *LocalAgg) aggregate(c *types.Chunk) (*types.Chunk, error) {
	l.reset()
	keyCols := make([]types.Column, len(l.keys))
	for j, k := range l.keys {
		keyCols[j] = c.Cols[k]
	}
	a, b, ints := intKeys(keyCols)
	for i, n := 0, c.Capacity(); i < n; i++ {
		if !c.Visible(i) {
			continue
		}
		if op := c.Op(i); op.Normalize() != types.Insert {
			return nil, fmt.Errorf("agg: local aggregation got %v; its input must only insert", op)
		}
		var g int32
		if ints {
			g = l.intGroup(a, b, i)
		} else {
			var err error
			if g, err = l.group(keyCols, i); err != nil {
				return nil, err
			}
		}
		l.add(c, g, i)
	}
	if len(l.first) == 0 {
		return nil, nil
	}
	return l.output(c), nil
}

func (l *LocalAgg) reset() {
	clear(l.index)
	clear(l.ints)
	l.first = l.first[:0]
	for ci := range l.calls {
		l.counts[ci], l.best[ci] = l.counts[ci][:0], l.best[ci][:0]
	}
}

// group returns the index of row i's group, adding one for a new key.
func (l *LocalAgg) group(keyCols []types.Column, i int) (int32, error) {
	var kb []byte
	var err error
	if l.exact {
		kb, err = codec.EncodeValueColumns(l.keyBuf[:0], keyCols, i)
	} else {
		for j, col := range keyCols {
			l.keyRow[j] = col.Get(i)
		}
		kb, err = codec.EncodeKey(l.keyBuf[:0], l.keyRow, l.keyTypes, nil)
		clear(l.keyRow)
	}
	if err != nil {
		return 0, fmt.Errorf("agg: local group key: %w", err)
	}
	l.keyBuf = kb
	if g, ok := l.index[string(kb)]; ok {
		return g, nil
	}
	g := l.newGroup(i)
	l.index[string(kb)] = g
	return g, nil
}

// intGroup is group for keys intKeys read: a's and (when set) b's
// values at row i.
func (l *LocalAgg) intGroup(a, b []int64, i int) int32 {
	k := [2]int64{a[i], 0}
	if b != nil {
		k[1] = b[i]
	}
	if g, ok := l.ints[k]; ok {
		return g
	}
	g := l.newGroup(i)
	l.ints[k] = g
	return g
}

// newGroup adds a group whose first row is i.
func (l *LocalAgg) newGroup(i int) int32 {
	g := int32(len(l.first))
	l.first = append(l.first, i)
	for ci := range l.calls {
		l.counts[ci] = append(l.counts[ci], 0)
		l.best[ci] = append(l.best[ci], -1)
	}
	return g
}

// intKeys returns the values of one or two key columns of int64-backed
// types (bigint, timestamp, timestamptz) without NULLs in this chunk, so
// that their groups are found without encoding the keys (Nexmark q5's
// window start and auction: 5 % of its CPU went to encoding and hashing
// them as strings). ok is false for any other keys.
func intKeys(cols []types.Column) (a, b []int64, ok bool) {
	if len(cols) == 0 || len(cols) > 2 {
		return nil, nil, false
	}
	if a, ok = int64Vals(cols[0]); !ok || len(cols) == 1 {
		return a, nil, ok
	}
	b, ok = int64Vals(cols[1])
	return a, b, ok
}

func int64Vals(col types.Column) ([]int64, bool) {
	vals, nulls, ok := int64Column(col)
	return vals, ok && !nulls.Any()
}

// asInt64s views s as int64s: the same memory, T being an int64.
func asInt64s[T ~int64](s []T) []int64 {
	return unsafe.Slice((*int64)(unsafe.Pointer(unsafe.SliceData(s))), len(s))
}

// add folds row i into group g's partials.
func (l *LocalAgg) add(c *types.Chunk, g int32, i int) {
	for ci, call := range l.calls {
		switch call.Kind {
		case plan.AggCountStar:
			l.counts[ci][g]++
		case plan.AggCount:
			if !c.Cols[call.Args[0]].IsNull(i) {
				l.counts[ci][g]++
			}
		default:
			col := c.Cols[call.Args[0]]
			if col.IsNull(i) {
				continue
			}
			b := l.best[ci][g]
			if b < 0 || beats(call.Kind, col, i, b) {
				l.best[ci][g] = i
			}
		}
	}
}

// beats reports whether row i of col replaces row b as the extreme: it
// is better or equal, the later of equal values winning as in the
// one-phase aggregation's kept extreme (equal numerics of different
// scales, or -0 and 0, show alike either way).
func beats(k plan.AggKind, col types.Column, i, b int) bool {
	var c int
	if v, ok := col.(*types.Vec[int64]); ok {
		c = cmp.Compare(v.Vals[i], v.Vals[b])
	} else {
		c = types.Compare(col.Get(i), col.Get(b))
	}
	if k == plan.AggMin {
		return c <= 0
	}
	return c >= 0
}

// output builds the chunk of the groups: keys gathered from each group's
// first row, counts as they are, extremes gathered from their rows.
func (l *LocalAgg) output(c *types.Chunk) *types.Chunk {
	cols := make([]types.Column, 0, len(l.schema))
	for _, k := range l.keys {
		cols = append(cols, c.Cols[k].Gather(l.first))
	}
	for ci, call := range l.calls {
		switch call.Kind {
		case plan.AggCountStar, plan.AggCount:
			cols = append(cols, &types.Vec[int64]{Typ: types.TInt64, Vals: append([]int64(nil), l.counts[ci]...)})
		default:
			cols = append(cols, gatherOrNull(c.Cols[call.Args[0]], l.best[ci]))
		}
	}
	return types.NewChunk(cols, nil)
}

// gatherOrNull gathers col's rows at idx, NULL where idx is -1.
func gatherOrNull(col types.Column, idx []int) types.Column {
	src := make([]int, len(idx))
	for j, i := range idx {
		src[j] = max(i, 0)
	}
	out := col.Gather(src)
	for j, i := range idx {
		if i < 0 {
			out.Set(j, nil)
		}
	}
	return out
}
