package expr

import (
	"fmt"
	"sync"

	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// maxDepth bounds Desc nesting so that a hostile or corrupt plan cannot
// exhaust the stack. It is above what the parser lets through (its
// maxNesting bounds a statement's tokens per path, two per level of a
// chain of operators), so SQL meets the parser's limit first: Postgres
// evaluates 1+1+…+1 up to about 4 000 terms, and so does Sluice.
const maxDepth = 6000

// Build type-checks d against the input column types and returns the
// evaluable Expr. A malformed Desc (unknown kind or function, wrong arity,
// argument types no overload accepts, input index out of range, invalid
// type, unparsable literal) is an error, never a panic. Numeric arguments of
// mixed types get implicit casts, so hand-written plans need not spell them.
func Build(d Desc, input []types.Type) (Expr, error) {
	for i, t := range input {
		if !t.Valid() {
			return nil, errBuild("input column %d has invalid type %d", i, t.ID)
		}
	}
	b := builder{input: input}
	return b.build(d, 0)
}

// MustBuild is Build for expressions known to be well formed (tests).
func MustBuild(d Desc, input []types.Type) Expr {
	e, err := Build(d, input)
	if err != nil {
		panic(err)
	}
	return e
}

type builder struct {
	input []types.Type
}

func (b *builder) build(d Desc, depth int) (Expr, error) {
	if depth > maxDepth {
		return nil, sqlerr.Errorf(sqlerr.StatementTooComplex, "statement too complex: an expression nests more than %d levels deep", maxDepth)
	}
	if d.Type.ID != types.Unknown && !d.Type.Valid() {
		return nil, errBuild("%s node has invalid type %d", d.Kind, d.Type.ID)
	}
	e, err := b.buildKind(d, depth)
	if err != nil {
		return nil, err
	}
	switch d.Kind {
	case KindInput, KindLiteral, KindCast:
	default:
		if d.Type.ID != types.Unknown && d.Type != e.Type() {
			return nil, errBuild("%s %q declared %s but returns %s", d.Kind, d.Name, d.Type, e.Type())
		}
	}
	return e, nil
}

func (b *builder) buildKind(d Desc, depth int) (Expr, error) {
	switch d.Kind {
	case KindInput:
		return b.buildInput(d)
	case KindLiteral:
		return buildLiteral(d)
	case KindParam:
		return &paramExpr{n: d.Index, typ: d.Type}, nil
	case KindOuter:
		return &outerExpr{i: d.Index, typ: d.Type}, nil
	}
	args, err := b.buildArgs(d.Args, depth)
	if err != nil {
		return nil, err
	}
	switch d.Kind {
	case KindFunc:
		return buildFunc(d.Name, args)
	case KindCast:
		if len(args) != 1 {
			return nil, errBuild("cast takes 1 argument, got %d", len(args))
		}
		return buildCast(args[0], d.Type)
	case KindCase:
		return buildCase(args)
	case KindSimpleCase:
		return buildSimpleCase(args)
	case KindAnd, KindOr:
		return buildAndOr(d.Kind, args)
	case KindNot, KindIsNull, KindIsNotNull, KindIsTrue, KindIsNotTrue, KindIsFalse, KindIsNotFalse:
		return buildTest(d.Kind, args)
	case KindIsDistinctFrom, KindIsNotDistinctFrom:
		return buildDistinct(d.Kind == KindIsNotDistinctFrom, args)
	case KindCoalesce:
		return buildCoalesce(args)
	case KindNullIf:
		return buildNullIf(args)
	case KindGreatest, KindLeast:
		return buildGreatest(d.Kind == KindGreatest, args)
	case KindIn, KindNotIn:
		return buildIn(d.Kind == KindNotIn, args)
	case KindArray:
		return buildArray(args, d.Type)
	case KindSingleRow:
		return buildSingleRow(args)
	}
	return nil, errBuild("unknown kind %q", d.Kind)
}

func (b *builder) buildArgs(ds []Desc, depth int) ([]Expr, error) {
	args := make([]Expr, len(ds))
	for i, a := range ds {
		e, err := b.build(a, depth+1)
		if err != nil {
			return nil, err
		}
		args[i] = e
	}
	return args, nil
}

func (b *builder) buildInput(d Desc) (Expr, error) {
	if d.Index < 0 || d.Index >= len(b.input) {
		return nil, errBuild("input index %d out of range (%d columns)", d.Index, len(b.input))
	}
	t := b.input[d.Index]
	if d.Type.ID != types.Unknown && d.Type != t {
		return nil, errBuild("input %d declared %s but the column is %s", d.Index, d.Type, t)
	}
	return &inputExpr{index: d.Index, typ: t}, nil
}

// inputExpr returns an input column as is (no copy).
type inputExpr struct {
	index int
	typ   types.Type
}

func (e *inputExpr) Type() types.Type { return e.typ }

func (e *inputExpr) Eval(_ *Context, c *types.Chunk) (types.Column, error) {
	if e.index >= len(c.Cols) {
		return nil, fmt.Errorf("expr: internal error: input %d of a %d-column chunk", e.index, len(c.Cols))
	}
	col := c.Cols[e.index]
	if col.Type() != e.typ {
		return nil, fmt.Errorf("expr: internal error: input %d is %s, built for %s", e.index, col.Type(), e.typ)
	}
	return col, nil
}

func buildLiteral(d Desc) (Expr, error) {
	if len(d.Args) != 0 {
		return nil, errBuild("literal has arguments")
	}
	if d.Value == nil {
		return &literalExpr{typ: d.Type}, nil
	}
	if d.Type.ID == types.Unknown {
		// An untyped string literal: kept as text until a function or
		// cast gives it a type.
		return &literalExpr{typ: d.Type, val: *d.Value}, nil
	}
	v, err := types.ParseDatum(*d.Value, d.Type)
	if err != nil {
		if _, ok := sqlerr.As(err); ok {
			return nil, err
		}
		return nil, sqlerr.Errorf(sqlerr.InvalidTextRepresentation, "%v", err)
	}
	return &literalExpr{typ: d.Type, val: v}, nil
}

// literalExpr is a constant. Kernels that care (comparisons) read val
// directly instead of materializing a column.
type literalExpr struct {
	typ types.Type
	val types.Datum
	// rows is DefaultChunkSize copies of val, made on first use: a chunk
	// of at most as many rows gets a head of it (types.Head) rather than a
	// column of its own, as nothing changes an evaluated column. A
	// watermark's `ts - INTERVAL '4' SECOND` and a window's date_bin
	// evaluated their constants into a tenth of what a hopping window's
	// source fragment allocated.
	once sync.Once
	rows types.Column
	err  error
}

func (e *literalExpr) Type() types.Type { return e.typ }

func (e *literalExpr) Eval(_ *Context, c *types.Chunk) (types.Column, error) {
	n := c.Capacity()
	if n > types.DefaultChunkSize {
		return constColumn(e.typ, e.val, n)
	}
	e.once.Do(func() { e.rows, e.err = constColumn(e.typ, e.val, types.DefaultChunkSize) })
	if e.err != nil {
		return nil, e.err
	}
	return types.Head(e.rows, n), nil
}

// constColumn returns n copies of d.
func constColumn(t types.Type, d types.Datum, n int) (types.Column, error) {
	col, err := types.NewColumn(t, n)
	if err != nil {
		return nil, err
	}
	if err := types.CheckDatum(d, t); err != nil && t.ID != types.Unknown {
		return nil, fmt.Errorf("expr: internal error: %w", err)
	}
	switch v := col.(type) {
	case *types.Vec[int64]:
		fillVec(v, d, n)
	case *types.Vec[float64]:
		fillVec(v, d, n)
	case *types.Vec[bool]:
		fillVec(v, d, n)
	case *types.Vec[string]:
		fillVec(v, d, n)
	case *types.Vec[types.DInterval]: // the typed fills spare a boxed Append per row
		fillVec(v, d, n)
	case *types.Vec[types.DTimestamp]:
		fillVec(v, d, n)
	case *types.Vec[types.DTimestamptz]:
		fillVec(v, d, n)
	case *types.Vec[types.DDate]:
		fillVec(v, d, n)
	case *types.Vec[types.DTime]:
		fillVec(v, d, n)
	default:
		for i := 0; i < n; i++ {
			col.Append(d)
		}
	}
	return col, nil
}

func fillVec[T any](v *types.Vec[T], d types.Datum, n int) {
	v.Vals = v.Vals[:n]
	if d == nil {
		v.Nulls = allNulls(n)
		return
	}
	x := d.(T)
	for i := range v.Vals {
		v.Vals[i] = x
	}
}

// EvalRow evaluates e over one row whose columns have the given types.
func EvalRow(ctx *Context, e Expr, row types.Row, input []types.Type) (types.Datum, error) {
	if len(row) != len(input) {
		return nil, fmt.Errorf("expr: row has %d values for %d types", len(row), len(input))
	}
	cols := make([]types.Column, len(input))
	for i, t := range input {
		col, err := types.NewColumn(t, 1)
		if err != nil {
			return nil, err
		}
		if err := types.CheckDatum(row[i], t); err != nil {
			return nil, err
		}
		col.Append(row[i])
		cols[i] = col
	}
	out, err := e.Eval(ctx, types.NewChunk(cols, []types.Op{types.Insert}))
	if err != nil {
		return nil, err
	}
	return out.Get(0), nil
}

// foldConst evaluates an argument-free expression once, at build time.
func foldConst(e Expr) (types.Datum, error) {
	return EvalRow(&Context{Strict: true}, e, nil, nil)
}
