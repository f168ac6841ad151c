// Package planner turns parsed SQL statements into what the engine runs:
// table specs, materialized-view specs with a logical stream plan, batch
// query plans, DML descriptions and drops.
//
// The flow, step by step:
//
//  1. Plan dispatches on pg_query's statement node. DDL and DROP are read
//     straight off the AST (types through types.ParseTypeName).
//  2. A query is bound bottom-up into plan nodes, each with the names of
//     its output columns (relExpr): FROM items (tables and views become
//     Backfill leaves over their state table, CTEs and subqueries are
//     planned in place, comma-separated items become equi-joins using the
//     WHERE conjuncts that relate them), then WHERE, GROUP BY/aggregates/
//     HAVING, the select list, DISTINCT, and ORDER BY … LIMIT (or FETCH …
//     WITH TIES) as top-N. GROUP BY also admits columns a grouped primary
//     key determines, and SELECT * over grouped columns. INTERSECT and
//     EXCEPT become a per-branch count(*) over the tagged UNION ALL of
//     both sides, grouped by every column, then a filter on the counts.
//  3. Expressions are bound by binder into expr.Desc; every composite node
//     is type-checked by expr.Build, and function overloads by
//     expr.ResolveFunc, so the planner and the executors agree on types.
//     Errors carry the SQLSTATE and the position of the offending token.
//  4. Every node gets a stream key: projections carry their input's key
//     columns along as hidden columns, joins concatenate both sides' keys,
//     aggregations are keyed by their group keys, UNION ALL by a hidden
//     branch number plus per-branch key slots. A view's primary key is its
//     plan's stream key, and the hidden columns become hidden view columns.
//  5. State tables are shaped as each executor checks them (join sides and
//     degrees, agg.ResultLayout/CallLayout, top-N keyed by order then
//     stream key, Distinct, backfill progress) with id 0; a view's are
//     given fresh ids from the IDAllocator once its plan is complete. A
//     batch plan uses the same node kinds, its Backfill leaves meaning a
//     scan of the committed snapshot; its final ORDER BY/LIMIT is returned
//     beside the plan instead of planned.
package planner
