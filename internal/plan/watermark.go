package plan

import (
	"slices"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/types"
)

// WatermarkFilter derives event time's progress from a source's rows
// (WATERMARK FOR col AS expr). Its watermark is the largest Expr seen so
// far; a row whose Col is below the watermark when it arrives (or NULL)
// is late and dropped, and each advance is sent on as a stream.Watermark
// on Col. Table keeps each actor's watermark, so a rebuilt actor filters
// exactly as before and re-announces it.
type WatermarkFilter struct {
	Col  int
	Expr expr.Desc
	// Table has WatermarkTable's shape.
	Table Table
}

// WatermarkTable is the shape of WatermarkFilter.Table for a watermark of
// type t: (actor index bigint, watermark t), keyed by the index.
func WatermarkTable(id uint32, t types.Type) Table {
	return Table{ID: id, Types: []types.Type{types.TInt64, t}, PK: []int{0}}
}

// MonotoneIn reports whether d never decreases as one input column grows,
// all else in it being constant, and which column: a column itself,
// date_bin and date_trunc of one, and one plus or minus a constant. A
// watermark on that column bounds d's values by d of the watermark.
func MonotoneIn(d expr.Desc) (int, bool) {
	switch d.Kind {
	case expr.KindInput:
		return d.Index, true
	case expr.KindFunc:
	default:
		return 0, false
	}
	a := d.Args
	switch {
	case d.Name == "date_bin" && len(a) == 3 && isConst(a[0]) && isConst(a[2]):
		return MonotoneIn(a[1])
	case d.Name == "date_trunc" && len(a) == 2 && isConst(a[0]):
		return MonotoneIn(a[1])
	case (d.Name == "+" || d.Name == "-") && len(a) == 2 && isConst(a[1]):
		return MonotoneIn(a[0])
	case d.Name == "+" && len(a) == 2 && isConst(a[0]):
		return MonotoneIn(a[1])
	}
	return 0, false
}

func isConst(d expr.Desc) bool { return d.Kind == expr.KindLiteral && d.Value != nil }

// DeriveStreamProps sets Watermarks and AppendOnly on every node of the
// tree under n, inputs first: the output columns a watermark reaches, and
// whether the node emits only inserts. Leaves keep what the planner set
// (a backfill of a table with a watermark), except that a connector
// source is append-only. An aggregation emitting on window close stays
// append-only, and so does a view's materialize over an append-only
// input (a backfill of the view is then append-only too).
func DeriveStreamProps(n *Node) {
	for _, in := range n.Inputs {
		DeriveStreamProps(in)
	}
	if n.Kind == KindConnectorSource {
		n.AppendOnly = true
	}
	if len(n.Inputs) == 0 {
		return
	}
	n.Watermarks = outputWatermarks(n)
	n.AppendOnly = appendOnly(n)
}

func appendOnly(n *Node) bool {
	switch n.Kind {
	case KindWatermarkFilter, KindProject, KindFilter, KindHopWindow, KindUnion, KindLocalAgg:
		return allAppendOnly(n.Inputs)
	case KindHashJoin:
		return n.HashJoin.Type == InnerJoin && allAppendOnly(n.Inputs)
	case KindHashAgg:
		return n.Agg.EmitOnWindowClose
	case KindMaterialize:
		// A view's materialize passes its input's changes on as they are;
		// a table's may turn an insert into an update of its key.
		return n.Materialize != nil && n.Materialize.View && allAppendOnly(n.Inputs)
	}
	return false
}

func allAppendOnly(nodes []*Node) bool {
	for _, n := range nodes {
		if !n.AppendOnly {
			return false
		}
	}
	return true
}

func outputWatermarks(n *Node) []int {
	in := n.Inputs[0].Watermarks
	var out []int
	switch n.Kind {
	case KindWatermarkFilter:
		out = append(slices.Clone(in), n.WatermarkFilter.Col)
	case KindFilter, KindMaterialize, KindBackfill:
		out = slices.Clone(in)
	case KindProject:
		for i, d := range n.Project.Exprs {
			if c, ok := MonotoneIn(d); ok && slices.Contains(in, c) {
				out = append(out, i)
			}
		}
	case KindHopWindow:
		out = slices.Clone(in)
		if slices.Contains(in, n.HopWindow.TimeCol) {
			w := len(n.Inputs[0].Schema)
			out = append(out, w, w+1)
		}
	case KindUnion:
		for _, c := range in {
			if allHave(n.Inputs, c) {
				out = append(out, c)
			}
		}
	case KindHashAgg:
		for j, k := range n.Agg.GroupKeys {
			// Emitting on window close, a group goes out when the first
			// key closes it, whatever its other keys.
			if slices.Contains(in, k) && (j == 0 || !n.Agg.EmitOnWindowClose) {
				out = append(out, j)
			}
		}
	case KindLocalAgg:
		for j, k := range n.LocalAgg.GroupKeys {
			if slices.Contains(in, k) {
				out = append(out, j)
			}
		}
	case KindDistinct:
		for j, k := range n.Distinct.Keys {
			if slices.Contains(in, k) {
				out = append(out, j)
			}
		}
	case KindHashJoin:
		out = joinWatermarks(n)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func allHave(nodes []*Node, c int) bool {
	for _, n := range nodes {
		if !slices.Contains(n.Watermarks, c) {
			return false
		}
	}
	return true
}

// JoinWatermarkKeys returns the indexes of an inner join's key pairs
// whose two sides both carry watermarks: the join's output watermark on
// such a key is the lesser of the two, and its state below it is never
// matched again.
func JoinWatermarkKeys(n *Node) []int {
	j := n.HashJoin
	if j == nil || j.Type != InnerJoin || len(n.Inputs) != 2 {
		return nil
	}
	var keys []int
	for k := range j.LeftKeys {
		if slices.Contains(n.Inputs[0].Watermarks, j.LeftKeys[k]) &&
			slices.Contains(n.Inputs[1].Watermarks, j.RightKeys[k]) && !nullSafe(j, k) {
			keys = append(keys, k)
		}
	}
	return keys
}

func nullSafe(j *HashJoin, k int) bool { return k < len(j.NullSafe) && j.NullSafe[k] }

// joinWatermarks: the output columns that are a watermarked key pair's
// left or right column.
func joinWatermarks(n *Node) []int {
	j := n.HashJoin
	width := len(n.Inputs[0].Schema)
	var out []int
	for _, k := range JoinWatermarkKeys(n) {
		for o, c := range j.Output {
			if c == j.LeftKeys[k] || c == width+j.RightKeys[k] {
				out = append(out, o)
			}
		}
	}
	return out
}

// TemporalFilter keeps the rows whose Col compares by Op (">", ">=", "<"
// or "<=") with Bound, an expression of now() and constants of Col's
// type. now() is the time of the last barrier, so the bound moves with
// time: with > or >= rows leave as the bound passes them (WHERE ts >
// now() - INTERVAL '1 hour'), with < or <= they arrive. Table holds the
// rows that may still change side, keyed by Col first
// (TemporalFilterTable).
type TemporalFilter struct {
	Col   int
	Op    string
	Bound expr.Desc
	Table Table
}

// TemporalFilterTable is the shape of TemporalFilter.Table over rows of
// schema: every column, keyed by col then the stream key, distributed by
// the stream key.
func TemporalFilterTable(id uint32, schema []types.Type, col int, streamKey []int) Table {
	pk := []int{col}
	for _, k := range streamKey {
		if k != col {
			pk = append(pk, k)
		}
	}
	return Table{ID: id, Types: slices.Clone(schema), PK: pk, DistKey: slices.Clone(streamKey)}
}
