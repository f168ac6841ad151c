// Package session is Sluice's SQL front end: a pgwire.Handler whose
// sessions parse, plan and run statements against an *engine.Engine.
//
// A statement's path, step by step:
//
//  1. pgwire calls Session.Query (simple protocol) or Prepare/Execute
//     (extended). parser.Parse splits the text into statements; each runs
//     in turn under the session's statement_timeout, and a cancelled
//     context (psql's Ctrl-C, a timeout) becomes 57014.
//  2. execute dispatches. Sluice's own statements (FLUSH, RECOVER, SHOW
//     TABLES / MATERIALIZED VIEWS, DESCRIBE, and the job controls of
//     control.go: ALTER … SET RATE_LIMIT / PAUSE / RESUME, SHOW JOBS,
//     CANCEL JOBS) come from the parser with their own Kind; SET/SHOW/RESET (setshow.go, vars.go), BEGIN/COMMIT/
//     ROLLBACK, EXPLAIN (explain.go) and COPY FROM STDIN (copy.go) are
//     handled here from pg_query's AST; SELECTs that read pg_catalog /
//     information_schema or call version(), current_schema(), … are
//     answered from the catalog (catalogq.go; catalogeval.go evaluates
//     them over the virtual system tables of catalogtables.go); everything
//     else goes to the planner.
//  3. Planner results run as: CREATE TABLE / MATERIALIZED VIEW through the
//     engine (which leaves nothing behind on failure; IF NOT EXISTS gives
//     a NOTICE; background_ddl returns before the backfill, and
//     backfill_rate_limit caps a new view's rows per second from its
//     first row), DROP per name (IF EXISTS, CASCADE, 2BP01 from the
//     engine), SELECT through internal/batch on one snapshot of the
//     latest state (tables with every acknowledged write, views as of the
//     committed epoch; a view read first waits for the epoch covering the
//     session's own writes, query.go), with rows streamed to the client.
//     INSERT/UPDATE/DELETE/COPY (dml.go, conflict.go, copy.go) take the
//     table's write lock (engine.TableWriter), read its latest state,
//     compute the changes (INSERT checks the primary key: 23505 or ON
//     CONFLICT; UPDATE as UpdateDelete+UpdateInsert pairs; DELETE with the
//     hidden row id read from the table) and write them as one record;
//     the lock is released before the sync. With implicit_flush (alias
//     RW_IMPLICIT_FLUSH) DML also waits for engine.Flush (a wait that ends
//     early warns; the write is durable).
//  4. Transactions (txn.go): a BEGIN … COMMIT block stages its changes on
//     its tables' writers, reads them back over the latest state, and
//     COMMIT writes them in one synced batch (engine.Commit); ROLLBACK, a
//     failed block's COMMIT and a closed connection discard them.
//  5. Extended protocol (prepare.go): the planner has no parameters, so a
//     prepared statement keeps its text, infers the types of $n where it
//     can (casts, comparisons with columns, INSERT VALUES positions;
//     others are text), describes its result by planning with NULLs, and
//     at Execute substitutes the bound values as typed literals.
//
// Serve and StartPlayground (serve.go) put a pgwire server in front of an
// engine, for cmd/sluice, cmd/sluice-peer and tests.
package session
