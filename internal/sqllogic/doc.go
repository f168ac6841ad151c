// Package sqllogic runs sqllogictest files against a Postgres-protocol
// server, the way sqllogictest-rs 0.29 (RisingWave's runner, engine
// "postgres") parses and checks them, so Sluice can be held to RisingWave's
// e2e files under /work/shared/peer-tests (see DIALECT.md there) and to
// files of our own.
//
// The flow of Run, step by step:
//
//  1. collectFiles expands the paths: directories are walked for *.slt in
//     sorted order; *.slt.part files are only reached through include.
//  2. For each file, ParseFile (parse.go) turns the text into Records.
//     Header lines pick the kind; SQL runs to a blank line or `----`;
//     expected rows run to a blank line; a multi-line expected error runs
//     to two blank lines. skipif/onlyif and connection lines attach to the
//     next record. include (include.go) is expanded in place, relative to
//     the including file, with `**` globs, and each spliced record keeps its
//     own file:line plus the include site.
//  3. Options.BeforeFile may hand the file a fresh server or database
//     (FreshDatabases creates one database per file); the file then gets its
//     own sessions (session.go): the default one and any named by
//     `connection`, opened on first use, closed at the end.
//  4. fileRun (file.go) walks the records: skipped records are counted,
//     control records change the file's sort mode, result mode, hash
//     threshold and substitution (substitute.go), halt stops the file,
//     and statements, queries, let and system records run, retried when the
//     header says `retry N backoff D`.
//  5. SQL goes out over the simple query protocol with values in text
//     form; like the Rust engine only the first statement's result counts.
//     NULL is spelled NULL, the empty string (empty). Errors are matched
//     in the text tokio-postgres would show ("db error: ERROR: …"), by regex, by
//     SQLSTATE for `error (XXXXX)`, or not at all for the multi-line form,
//     whose text is another engine's.
//  6. Results (compare.go) are shaped as the Rust runner does: rowsort
//     sorts whole actual rows by raw strings, valuesort sorts single
//     values, valuewise puts one value per line, and more values than the
//     hash threshold become "N values hashing to <md5>". Values and
//     expected lines are trimmed with whitespace runs collapsed and compared
//     as strings.
//  7. Only if that fails, semantic.go compares value by value: numbers as
//     exact decimals, timestamps as instants (or wall times, never mixed),
//     intervals by months and by days-plus-time, booleans t/true, each only
//     when the column's type OID allows it (text compares as text). A
//     record that passes this way counts as passed and as Semantic, so a
//     formatting gap in Sluice stays visible without failing the suite.
//  8. Failures keep file:line, SQL, expected and actual; FileResults and
//     totals go to OnFile and into the Summary.
//
// The pgtest subpackage starts private Postgres clusters for tests (and for
// `sluice-slt --postgres`), so the same files can be checked against the
// reference engine.
package sqllogic
