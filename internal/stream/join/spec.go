package join

import (
	"fmt"
	"slices"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// spec is a validated plan.HashJoin with everything derived from it that
// the executor needs per row. Building it is the only place a malformed
// node is detected, so the hot path can index without checks.
type spec struct {
	joinType plan.JoinType
	sides    [2]sideSpec
	nullSafe []bool
	// residual is nil when the join has no residual condition. It reads
	// resCols of the concatenated row, renumbered 0, 1, …: a pair's
	// residual chunk holds those columns only.
	residual    expr.Expr
	resCols     []int
	resTypes    []types.Type
	output      []int
	outTypes    []types.Type
	concatTypes []types.Type
}

// sideSpec describes one input (0 = left, 1 = right).
type sideSpec struct {
	types []types.Type
	keys  []int
	// outer: the side's unmatched rows appear padded with NULLs, so each of
	// its rows carries a match degree.
	outer    bool
	table    plan.Table
	degree   *plan.Table
	keyTypes []types.Type
	pkTypes  []types.Type
	keyOrd   []codec.Order // nil or the table's orders over the key prefix
	pkOrd    []codec.Order
	expiry   *expirySpec // nil: rows stay until retracted
	// appendOnly: the input only inserts, so a side may defer its rows'
	// writes (deferred.go).
	appendOnly bool
}

func newSpec(n *plan.Node, inputs [2][]types.Type) (*spec, error) {
	hj := n.HashJoin
	if hj == nil {
		return nil, fmt.Errorf("join: node %q has no HashJoin description", n.Kind)
	}
	outerL, outerR, err := outerSides(hj.Type)
	if err != nil {
		return nil, err
	}
	if err := checkKeys(hj, inputs); err != nil {
		return nil, err
	}
	sp := &spec{joinType: hj.Type, nullSafe: hj.NullSafe, output: hj.Output}
	if sp.nullSafe == nil {
		sp.nullSafe = make([]bool, len(hj.LeftKeys))
	}
	sp.sides[0], err = newSideSpec("left", inputs[0], hj.LeftKeys, outerL, hj.LeftTable, hj.LeftDegreeTable)
	if err != nil {
		return nil, err
	}
	sp.sides[1], err = newSideSpec("right", inputs[1], hj.RightKeys, outerR, hj.RightTable, hj.RightDegreeTable)
	if err != nil {
		return nil, err
	}
	sp.sides[0].appendOnly, sp.sides[1].appendOnly = hj.LeftAppendOnly, hj.RightAppendOnly
	if hj.LeftExpiry != nil || hj.RightExpiry != nil {
		if hj.Type != plan.InnerJoin {
			return nil, fmt.Errorf("join: expiry on a %s join", hj.Type)
		}
		if sp.sides[0].expiry, err = newExpirySpec("left", hj.LeftExpiry, inputs[0], inputs[1]); err != nil {
			return nil, err
		}
		if sp.sides[1].expiry, err = newExpirySpec("right", hj.RightExpiry, inputs[1], inputs[0]); err != nil {
			return nil, err
		}
	}
	sp.concatTypes = slices.Concat(inputs[0], inputs[1])
	if err := sp.buildOutput(n.Schema); err != nil {
		return nil, err
	}
	if err := sp.buildResidual(hj.Residual); err != nil {
		return nil, err
	}
	return sp, nil
}

func outerSides(t plan.JoinType) (left, right bool, err error) {
	switch t {
	case plan.InnerJoin:
		return false, false, nil
	case plan.LeftJoin:
		return true, false, nil
	case plan.RightJoin:
		return false, true, nil
	case plan.FullJoin:
		return true, true, nil
	}
	return false, false, fmt.Errorf("join: unknown join type %q", t)
}

func checkKeys(hj *plan.HashJoin, inputs [2][]types.Type) error {
	nk := len(hj.LeftKeys)
	switch {
	case nk == 0:
		return fmt.Errorf("join: a hash join needs at least one equi key")
	case len(hj.RightKeys) != nk:
		return fmt.Errorf("join: %d left keys but %d right keys", nk, len(hj.RightKeys))
	case hj.NullSafe != nil && len(hj.NullSafe) != nk:
		return fmt.Errorf("join: NullSafe has %d entries for %d keys", len(hj.NullSafe), nk)
	}
	for i := range nk {
		l, r := hj.LeftKeys[i], hj.RightKeys[i]
		if l < 0 || l >= len(inputs[0]) || r < 0 || r >= len(inputs[1]) {
			return fmt.Errorf("join: key %d refers to column %d/%d outside the inputs (%d/%d columns)",
				i, l, r, len(inputs[0]), len(inputs[1]))
		}
		if !sameDatumKind(inputs[0][l], inputs[1][r]) {
			return fmt.Errorf("join: key %d compares %s with %s", i, inputs[0][l], inputs[1][r])
		}
	}
	return nil
}

// sameDatumKind reports whether values of a and b share a Go representation
// and key encoding, so one side's key can probe the other's state.
func sameDatumKind(a, b types.Type) bool {
	return a == b || (a.IsInteger() && b.IsInteger()) || (a.IsFloat() && b.IsFloat())
}

func newSideSpec(name string, ts []types.Type, keys []int, outer bool, t plan.Table, deg *plan.Table) (sideSpec, error) {
	s := sideSpec{types: ts, keys: keys, outer: outer, table: t, degree: deg}
	if err := checkRowTable(name, ts, keys, t); err != nil {
		return s, err
	}
	s.keyTypes = pick(ts, keys)
	s.pkTypes = pick(ts, t.PK)
	if t.Orders != nil {
		s.pkOrd = t.Orders[:len(t.PK)]
		s.keyOrd = t.Orders[:len(keys)]
	}
	if !outer {
		return s, nil
	}
	if deg == nil {
		return s, fmt.Errorf("join: %s side of an outer join needs a degree table", name)
	}
	return s, checkDegreeTable(name, s, *deg)
}

// checkRowTable checks that a side's table stores whole input rows keyed by
// (join key, stream key) and distributed by the join key, which is what lets
// a probe find every row of a key with one prefix scan in one vnode.
func checkRowTable(name string, ts []types.Type, keys []int, t plan.Table) error {
	if !slices.Equal(t.Types, ts) {
		return fmt.Errorf("join: %s table %d types %v differ from the input's %v", name, t.ID, t.Types, ts)
	}
	if len(t.PK) < len(keys) || !slices.Equal(t.PK[:len(keys)], keys) {
		return fmt.Errorf("join: %s table %d PK %v must start with the join keys %v", name, t.ID, t.PK, keys)
	}
	for _, c := range t.PK {
		if c < 0 || c >= len(ts) {
			return fmt.Errorf("join: %s table %d PK column %d out of range", name, t.ID, c)
		}
	}
	if t.Orders != nil && len(t.Orders) < len(t.PK) {
		return fmt.Errorf("join: %s table %d has %d orders for %d PK columns", name, t.ID, len(t.Orders), len(t.PK))
	}
	if !slices.Equal(t.DistKey, keys) {
		return fmt.Errorf("join: %s table %d DistKey %v must be the join keys %v", name, t.ID, t.DistKey, keys)
	}
	return nil
}

// checkDegreeTable checks the degree table's shape: the row table's PK
// columns (in PK order) then a bigint degree; PK = those first columns.
func checkDegreeTable(name string, s sideSpec, d plan.Table) error {
	np := len(s.table.PK)
	want := append(slices.Clone(s.pkTypes), types.TInt64)
	if !slices.Equal(d.Types, want) {
		return fmt.Errorf("join: %s degree table %d types %v, want %v", name, d.ID, d.Types, want)
	}
	if !slices.Equal(d.PK, seq(0, np)) {
		return fmt.Errorf("join: %s degree table %d PK %v, want %v", name, d.ID, d.PK, seq(0, np))
	}
	if !slices.Equal(d.DistKey, seq(0, len(s.keys))) {
		return fmt.Errorf("join: %s degree table %d DistKey %v, want %v", name, d.ID, d.DistKey, seq(0, len(s.keys)))
	}
	if s.table.Orders != nil && !slices.Equal(d.Orders[:min(len(d.Orders), np)], s.pkOrd) {
		return fmt.Errorf("join: %s degree table %d orders differ from the row table's", name, d.ID)
	}
	return nil
}

func (sp *spec) buildOutput(schema []types.Type) error {
	if len(sp.output) == 0 {
		return fmt.Errorf("join: no output columns")
	}
	sp.outTypes = make([]types.Type, len(sp.output))
	for k, o := range sp.output {
		switch {
		case o == -1 && k < len(schema): // NULL, of the node's type (plan.NullUnread)
			sp.outTypes[k] = schema[k]
		case o < 0 || o >= len(sp.concatTypes):
			return fmt.Errorf("join: output column %d outside the %d joined columns", o, len(sp.concatTypes))
		default:
			sp.outTypes[k] = sp.concatTypes[o]
		}
	}
	if schema != nil && !slices.Equal(schema, sp.outTypes) {
		return fmt.Errorf("join: node schema %v differs from the output's %v", schema, sp.outTypes)
	}
	return nil
}

func (sp *spec) buildResidual(d *expr.Desc) error {
	if d == nil {
		return nil
	}
	used := make([]bool, len(sp.concatTypes))
	if !plan.MarkInputs(used, *d) {
		return fmt.Errorf("join: residual condition reads a column out of range")
	}
	for c, u := range used {
		if u {
			sp.resCols = append(sp.resCols, c)
		}
	}
	if len(sp.resCols) == 0 {
		sp.resCols = []int{0} // a chunk needs a column to have rows
	}
	sp.resTypes = pick(sp.concatTypes, sp.resCols)
	at := make(map[int]int, len(sp.resCols))
	for k, c := range sp.resCols {
		at[c] = k
	}
	e, err := expr.Build(renumber(*d, at), sp.resTypes)
	if err != nil {
		return fmt.Errorf("join: residual condition: %w", err)
	}
	if e.Type() != types.TBool {
		return fmt.Errorf("join: residual condition is %s, want boolean", e.Type())
	}
	sp.residual = e
	return nil
}

// renumber is d reading input column at[i] where it read i.
func renumber(d expr.Desc, at map[int]int) expr.Desc {
	r, _ := expr.RemapInputs(d, func(i int) (int, bool) { return at[i], true })
	return r
}

func pick[T any](xs []T, idx []int) []T {
	out := make([]T, len(idx))
	for i, j := range idx {
		out[i] = xs[j]
	}
	return out
}

func seq(from, to int) []int {
	out := make([]int, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}
