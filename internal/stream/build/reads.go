package build

import (
	"github.com/sluice-db/sluice/internal/plan"
)

// reads marks the output columns of a node that its consumer reads; nil
// means every column. A merge told that the chain above reads only some
// columns of a table's fresh rows skips decoding the others (a view of two
// columns of a wide table then never builds the strings it drops).

// inputReads returns what n reads of each of its inputs, given what n's
// consumer reads of n (out). Projections, filters and backfills narrow it:
// a projection reads the columns its expressions name; a filter reads its
// condition's columns and what passes through it; a backfill reads the
// upstream columns it emits that are read, plus the upstream's key and
// distribution columns, which it fences and routes by; a hop window and a
// watermark filter read what passes through them and their time column
// (and the watermark's expression). Every other node reads all of every
// input.
func inputReads(n *plan.Node, out []bool) [][]bool {
	in := make([][]bool, len(n.Inputs))
	if len(n.Inputs) != 1 || n.Inputs[0] == nil {
		return in
	}
	width := len(n.Inputs[0].Schema)
	switch {
	case n.Project != nil:
		r := make([]bool, width)
		for _, e := range n.Project.Exprs {
			if !plan.MarkInputs(r, e) {
				return in
			}
		}
		in[0] = narrowed(r)
	case n.Filter != nil && out != nil && len(out) == width:
		r := append([]bool(nil), out...)
		if plan.MarkInputs(r, n.Filter.Cond) {
			in[0] = narrowed(r)
		}
	case n.Backfill != nil && out != nil && len(out) == len(n.Backfill.Columns):
		in[0] = backfillReads(n.Backfill, out, width)
	case n.HopWindow != nil && out != nil && len(out) == width+2:
		// The input's columns pass through; the time column makes the
		// windows.
		r := append([]bool(nil), out[:width]...)
		if plan.MarkColumns(r, n.HopWindow.TimeCol) {
			in[0] = narrowed(r)
		}
	case n.WatermarkFilter != nil && out != nil && len(out) == width:
		r := append([]bool(nil), out...)
		if plan.MarkColumns(r, n.WatermarkFilter.Col) && plan.MarkInputs(r, n.WatermarkFilter.Expr) {
			in[0] = narrowed(r)
		}
	}
	return in
}

func backfillReads(bf *plan.Backfill, out []bool, width int) []bool {
	r := make([]bool, width)
	mark := func(cols []int) bool {
		for _, c := range cols {
			if c < 0 || c >= width {
				return false
			}
			r[c] = true
		}
		return true
	}
	var emitted []int
	for j, c := range bf.Columns {
		if out[j] {
			emitted = append(emitted, c)
		}
	}
	if !mark(emitted) || !mark(bf.Upstream.PK) || !mark(bf.Upstream.DistKey) {
		return nil
	}
	return narrowed(r)
}

// narrowed is r, or nil when r marks every column.
func narrowed(r []bool) []bool {
	for _, b := range r {
		if !b {
			return r
		}
	}
	return nil
}
