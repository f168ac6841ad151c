package batch

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/types"
)

// A filter directly over a table scan whose condition fixes a prefix of
// the table's primary key to constants (AND-ed `key = c` or `key IN (c,
// …)` on the leading key columns), or bounds the key column after that
// prefix (`key >= c AND key < d`), reads only those keys: one seek per
// combination of values (per vnode, unless the prefix covers the
// distribution key), instead of scanning the table. The filter still runs
// over what the seeks return, so the rest of the condition, and any NULL or
// out-of-range subtlety of the fixed columns, keeps its meaning.

// maxLookupPrefixes bounds the seeks one lookup may make; past it (a long
// IN list times another), the scan is cheaper to reason about.
const maxLookupPrefixes = 4096

// keyLookup is the PK prefixes a filtered scan reads and, optionally, a
// range of the key column after them (`key > c`, `key <= c`, BETWEEN).
type keyLookup struct {
	cols     int         // leading key columns fixed
	prefixes []types.Row // distinct, each of cols values
	lo, hi   *storage.Bound
}

// lookupOf returns the lookup that can replace filter n's scan, or nil.
func lookupOf(n *plan.Node, now types.DTimestamptz) *keyLookup {
	if n.Kind != plan.KindFilter || n.Filter == nil || len(n.Inputs) != 1 {
		return nil
	}
	in := n.Inputs[0]
	if in.Kind != plan.KindBackfill || in.Backfill == nil || len(in.Backfill.Upstream.PK) == 0 {
		return nil
	}
	b := in.Backfill
	conj := conjuncts(n.Filter.Cond)
	lk := &keyLookup{prefixes: []types.Row{{}}}
	for _, u := range b.Upstream.PK {
		out := slices.Index(b.Columns, u)
		if out < 0 {
			break
		}
		vals := fixedValues(conj, out, b.Upstream.Types[u], now)
		if vals == nil || len(lk.prefixes)*len(vals) > maxLookupPrefixes {
			break
		}
		var next []types.Row
		for _, p := range lk.prefixes {
			for _, v := range vals {
				next = append(next, append(slices.Clone(p), v))
			}
		}
		lk.prefixes, lk.cols = next, lk.cols+1
	}
	if lk.cols < len(b.Upstream.PK) && (b.Upstream.Orders == nil || !b.Upstream.Orders[lk.cols].Desc) {
		u := b.Upstream.PK[lk.cols]
		if out := slices.Index(b.Columns, u); out >= 0 {
			lk.lo, lk.hi = rangeOf(conj, out, b.Upstream.Types[u], now)
		}
	}
	if lk.cols == 0 && lk.lo == nil && lk.hi == nil {
		return nil
	}
	lk.prefixes = distinctRows(lk.prefixes, b.Upstream, lk.cols)
	return lk
}

// rangeOf returns the first lower and upper bounds the conjuncts put on
// column col (col > c, c < col, …); any is a superset of the rows the
// filter keeps, which it then checks.
func rangeOf(conj []expr.Desc, col int, t types.Type, now types.DTimestamptz) (lo, hi *storage.Bound) {
	flip := map[string]string{"<": ">", "<=": ">=", ">": "<", ">=": "<="}
	for _, c := range conj {
		if c.Kind != expr.KindFunc || len(c.Args) != 2 || flip[c.Name] == "" {
			continue
		}
		op, other := c.Name, c.Args[1]
		switch {
		case isInput(c.Args[0], col):
		case isInput(c.Args[1], col):
			op, other = flip[op], c.Args[0]
		default:
			continue
		}
		vals, ok := constants([]expr.Desc{other}, t, now)
		if !ok || len(vals) == 0 {
			continue // NULL: the filter keeps nothing; leave it the scan
		}
		b := &storage.Bound{Value: vals[0], Inclusive: op == ">=" || op == "<="}
		switch {
		case (op == ">" || op == ">=") && lo == nil:
			lo = b
		case (op == "<" || op == "<=") && hi == nil:
			hi = b
		}
	}
	return lo, hi
}

func conjuncts(d expr.Desc) []expr.Desc {
	if d.Kind != expr.KindAnd {
		return []expr.Desc{d}
	}
	var out []expr.Desc
	for _, a := range d.Args {
		out = append(out, conjuncts(a)...)
	}
	return out
}

// fixedValues returns the non-NULL values a conjunct fixes column col to
// (`col = c`, `c = col`, `col IN (…)`), or nil when none does. A NULL
// value matches nothing and is left out, so a key fixed only to NULL gives
// an empty, non-nil list: no seek, no row.
func fixedValues(conj []expr.Desc, col int, t types.Type, now types.DTimestamptz) []types.Datum {
	for _, c := range conj {
		var cands []expr.Desc
		switch {
		case c.Kind == expr.KindFunc && c.Name == "=" && len(c.Args) == 2:
			switch {
			case isInput(c.Args[0], col):
				cands = c.Args[1:]
			case isInput(c.Args[1], col):
				cands = c.Args[:1]
			}
		case c.Kind == expr.KindIn && len(c.Args) > 1 && isInput(c.Args[0], col):
			cands = c.Args[1:]
		}
		if vals, ok := constants(cands, t, now); ok && len(cands) > 0 {
			return vals
		}
	}
	return nil
}

func isInput(d expr.Desc, col int) bool { return d.Kind == expr.KindInput && d.Index == col }

// constants evaluates ds, each a constant of exactly type t, an untyped
// literal, or an integer when t is an integer type (`id = 5` on a bigint
// key: the literal is an integer); a comparison across other types may
// round, so it is left to the filter. An integer outside t's range equals
// no key, and is dropped.
func constants(ds []expr.Desc, t types.Type, now types.DTimestamptz) ([]types.Datum, bool) {
	vals := make([]types.Datum, 0, len(ds))
	for _, d := range ds {
		if usesInput(d) {
			return nil, false
		}
		if d.Kind == expr.KindLiteral && d.Type.ID == types.Unknown {
			d = expr.Cast(d, t) // an untyped literal takes the column's type, as in the comparison
		}
		e, err := expr.Build(d, nil)
		if err != nil || e.Type() != t && !(e.Type().IsInteger() && t.IsInteger()) {
			return nil, false
		}
		v, err := expr.EvalRow(&expr.Context{Strict: true, Now: now}, e, nil, nil)
		if err != nil {
			return nil, false
		}
		if v != nil && intFits(v, t) {
			vals = append(vals, v)
		}
	}
	return vals, true
}

// intFits reports whether v, when an integer (every integer type's datum
// is an int64), lies in integer type t's range; other values fit.
func intFits(v types.Datum, t types.Type) bool {
	x, ok := v.(int64)
	switch {
	case !ok || t.ID == types.Int64:
		return true
	case t.ID == types.Int32:
		return x >= math.MinInt32 && x <= math.MaxInt32
	case t.ID == types.Int16:
		return x >= math.MinInt16 && x <= math.MaxInt16
	}
	return true
}

func usesInput(d expr.Desc) bool {
	if d.Kind == expr.KindInput {
		return true
	}
	return slices.ContainsFunc(d.Args, usesInput)
}

// distinctRows drops repeated prefixes (IN (1, 1) must not read a row
// twice), comparing as the store's keys do.
func distinctRows(rows []types.Row, t plan.Table, cols int) []types.Row {
	ts := make([]types.Type, cols)
	for i := range cols {
		ts[i] = t.Types[t.PK[i]]
	}
	seen := map[string]bool{}
	out := rows[:0]
	for _, r := range rows {
		k := types.FormatRow(r, ts)
		if !seen[k] {
			seen[k] = true
			out = append(out, r)
		}
	}
	return out
}

// scanKeys reads the lookup's prefixes of a Backfill leaf's table.
func (x *executor) scanKeys(ctx context.Context, n *plan.Node, lk *keyLookup, emit emitFunc) error {
	b := n.Backfill
	bld := types.NewBuilder(n.Schema, x.size)
	for _, p := range lk.prefixes {
		var it storage.Iterator
		var err error
		if lk.lo != nil || lk.hi != nil {
			it, err = x.r.ScanRange(ctx, storage.TableDesc(b.Upstream), p, lk.lo, lk.hi)
		} else {
			it, err = x.r.Scan(ctx, storage.TableDesc(b.Upstream), p)
		}
		if err != nil {
			return err
		}
		for {
			row, ok, err := it.Next()
			if err != nil {
				_ = it.Close()
				return err
			}
			if !ok {
				break
			}
			if err := send(ctx, emit, bld.Append(types.Insert, pick(row, b.Columns))); err != nil {
				_ = it.Close()
				return err
			}
		}
		if err := it.Close(); err != nil {
			return err
		}
	}
	return send(ctx, emit, bld.Take())
}

// DescribeLookup says, for EXPLAIN, how a filter node reads its table: a
// key lookup ("pk lookup: 2 keys on 1 of 2 key columns"), or "" for a scan.
func DescribeLookup(n *plan.Node) string {
	lk := lookupOf(n, 0)
	if lk == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "pk lookup: %d key", len(lk.prefixes))
	if len(lk.prefixes) != 1 {
		b.WriteString("s")
	}
	fmt.Fprintf(&b, " on %d of %d key columns", lk.cols, len(n.Inputs[0].Backfill.Upstream.PK))
	if lk.lo != nil || lk.hi != nil {
		b.WriteString(", then a range")
	}
	return b.String()
}
