// Package expr describes scalar SQL expressions as data and evaluates them
// a chunk at a time.
//
// The flow, step by step:
//
//  1. The planner describes an expression as a Desc tree (desc.go): plain
//     data — kinds, names, types, input indexes and literals in Postgres
//     text form — so a plan can be stored and sent to another node as JSON.
//     While planning it asks ResolveFunc for a call's result type and uses
//     CommonType / CanImplicitCast / CanCast (coerce.go) to unify types.
//  2. Build (build.go) type-checks a Desc against the input column types
//     and returns an Expr. Calls are resolved against one read-only
//     registry of overloads (resolve.go): an exact match, else the
//     arguments' common type (integer + bigint runs as bigint + bigint),
//     else the overload needing the fewest implicit casts. Build inserts
//     those casts and folds casts of literals. Anything malformed is an
//     error (42883 for an unknown function or operator), never a panic.
//  3. Expr.Eval(ctx, chunk) returns one column with a value for every row
//     of the chunk. Kernels (kernel.go) type-assert argument columns to
//     *types.Vec[T] and loop over the Go slices; NULLs propagate through
//     the null bitmaps. Integer arithmetic and comparisons have tight,
//     specialized loops (arith_int.go, compare.go); everything else goes
//     through generic unary/binary row functions, or a boxed n-ary path
//     for variadic functions.
//  4. A row error (overflow 22003, division by zero 22012, a bad cast) is
//     handled by the Context: Strict (batch queries) fails the evaluation
//     with the *sqlerr.Error, as Postgres would; non-strict (streaming
//     jobs) makes the row NULL, counts it (RowErrors, OnRowError) and goes
//     on. Errors on invisible rows are ignored in both modes, which is what
//     lets CASE, COALESCE, AND and OR evaluate an argument only over the
//     rows that reach it (the argument sees the chunk with a narrower
//     visibility mask).
//
// Semantics follow Postgres 14+ where the code does not say otherwise:
// integer overflow is checked at the SQL width; float division by zero and
// overflow are errors; float → int rounds half to even, numeric → int half
// away from zero; numeric + - * are exact and numeric division uses
// Postgres's select_div_scale (at least 16 significant digits); extract
// returns numeric, date_part double precision; string functions count
// characters and compare in byte order (C collation); timestamptz is
// converted in Context.Location (UTC when nil); now() is Context.Now.
// Arrays are one-dimensional with lower bound 1 (array.go, array_funcs.go):
// their functions are registered once per element type rather than as
// polymorphic anyarray signatures.
package expr
