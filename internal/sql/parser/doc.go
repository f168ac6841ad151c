// Package parser turns SQL text into statements. It wraps pg_query (the
// real PostgreSQL grammar, via cgo) and adds a small hand-written grammar
// for the statements Postgres does not have (FLUSH, SHOW JOBS, RECOVER,
// ALTER … SET RATE_LIMIT, DESCRIBE, …).
//
// The flow of Parse, step by step:
//
//  1. Scan the whole input with Postgres's own scanner and cut it into
//     statements at top-level semicolons (the scanner already knows
//     strings, quoted identifiers, comments and dollar quotes).
//  2. For each piece, try the hand-written grammar on its tokens. A piece
//     whose leading words name one of those statements is parsed entirely
//     by it, and a mistake there is a syntax error at the offending token.
//  3. Otherwise, strip RisingWave's `APPEND ONLY` from a CREATE TABLE
//     (remembering it in Statement.AppendOnly) and hand the piece to
//     pg_query. The piece is parsed with everything before it blanked out
//     to spaces, so every Location in the AST is a byte offset into the
//     original input; Statement.Position turns one into the 1-based
//     character position Postgres reports.
//  4. A pg_query syntax error becomes a *sqlerr.Error 42601 whose Position
//     counts characters from the start of the whole input, as Postgres's
//     does for a multi-statement simple query.
//
// The AST of a standard statement is pg_query's own (*pg_query.Node); this
// package defines no second AST.
package parser
