package agg

import (
	"fmt"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/types"
)

// A min or max call's answer is the first row of its group's value table,
// but reading it with a prefix scan at every flush cost a scan per dirty
// group per epoch (and, with a bulk epoch, an ordered index over all its
// uncommitted value rows). So each group also keeps the call's current
// extreme in memory, exact while every change since it was read is
// accounted for:
//
//   - a group loaded from the result table starts with the output it last
//     persisted, which is the extreme it had; a group with no result row has
//     no value rows either (they are written and deleted in the same epochs
//     as the result row), so its extreme is known to be none;
//   - a value entering the multiset replaces the extreme when it is better,
//     or key-equal (the table row now holds that spelling: numeric 1.00 over
//     1.0, as the scan would show);
//   - the extreme's own value leaving the multiset (multiplicity to zero)
//     makes the extreme unknown, and the next flush scans, as before.
//
// Nothing here is needed for recovery: a rebuilt group starts from its
// persisted output again.

// extreme is one min or max call's current value in a group.
type extreme struct {
	v     types.Datum // nil: the group has no value (the output is NULL)
	known bool
}

// isExtremeCall reports whether call keeps an extreme (a min or max).
func isExtremeCall(call *callSpec) bool {
	return call.tableBacked && (call.Kind == plan.AggMin || call.Kind == plan.AggMax)
}

// noteExtreme accounts for v's multiplicity in call ci's value table going
// from before to after.
func (g *group) noteExtreme(ci int, call *callSpec, v types.Datum, before, after int64) {
	if g.ext == nil {
		return
	}
	e := &g.ext[ci]
	if !e.known {
		return
	}
	c := 1 // v is better than the extreme
	if e.v != nil {
		c = types.Compare(v, e.v)
		if call.Kind == plan.AggMin {
			c = -c
		}
	}
	switch {
	case after > 0 && c >= 0:
		e.v = v
	case after == 0 && before > 0 && c == 0:
		e.known, e.v = false, nil
	}
}

// knownExtreme returns call ci's extreme when it is known.
func (g *group) knownExtreme(ci int) (types.Datum, bool) {
	if g.ext == nil || !g.ext[ci].known {
		return nil, false
	}
	return g.ext[ci].v, true
}

// setExtreme records call ci's extreme as read from the value table.
func (g *group) setExtreme(ci int, v types.Datum) {
	if g.ext != nil {
		g.ext[ci] = extreme{v: v, known: true}
	}
}

// noteExtremeInt is noteExtreme for an integer value entering the
// multiset: the value is boxed only when it becomes the extreme.
func (g *group) noteExtremeInt(ci int, call *callSpec, n int64) {
	if g.ext == nil || !g.ext[ci].known {
		return
	}
	e := &g.ext[ci]
	cur, ok := e.v.(int64)
	switch {
	case e.v == nil:
		e.v = n
	case !ok: // not an integer column's extreme: compare as datums
		g.noteExtreme(ci, call, n, 0, 1)
	case call.Kind == plan.AggMin && n < cur, call.Kind == plan.AggMax && n > cur:
		e.v = n
	}
}

// A min or max over an append-only input (plan.Agg.AppendOnlyInput) needs
// no value table: no value ever leaves, so the extreme never becomes
// unknown. It is the output the result row persists, which is where a
// loaded group reads it back from.

// applyKept folds row i of col into kept call ci's extreme in g.
func applyKept(g *group, ci int, call *callSpec, col types.Column, i int, sign int64) error {
	if sign < 0 {
		return fmt.Errorf("agg: %s over an append-only input got a delete", call.Kind)
	}
	if iv, ok := col.(*types.Vec[int64]); ok {
		g.noteExtremeInt(ci, call, iv.Vals[i])
		return nil
	}
	g.noteExtreme(ci, call, col.Get(i), 0, 1)
	return nil
}

// keptOutput is kept call ci's output in g: its extreme.
func keptOutput(g *group, ci int, call *callSpec) (types.Datum, error) {
	v, ok := g.knownExtreme(ci)
	if !ok {
		return nil, fmt.Errorf("agg: %s over an append-only input lost its extreme", call.Kind)
	}
	return v, nil
}
