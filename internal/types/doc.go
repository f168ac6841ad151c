// Package types holds Sluice's SQL data types, the Go values that carry them
// (Datum), typed column vectors with null bitmaps, and the columnar Chunk that
// flows through every streaming and batch executor.
//
// The flow, step by step:
//
//  1. A SQL type is a Type: an ID, plus the element ID for a one-dimensional
//     Array (integer[] is {Array, Int32}); parameters such as numeric
//     precision are checked at the edge and not carried. Types compare with
//     ==.
//  2. One value is a Datum: a Go value whose dynamic type is fixed by the SQL
//     type (see datum.go); SQL NULL is the nil Datum. An array is a DArray of
//     element datums (array.go: Postgres's {a,"b c",NULL} text form and its
//     element-wise ordering).
//  3. Many values of one type are a Column: a Vec[T] holding a plain Go slice
//     and a null bitmap. Kernels type-assert to the concrete Vec and loop,
//     and write only columns they made. A column handed out many times (a
//     constant; the NULLs of a column nobody reads, in a builder's, a hop
//     window's or a source's chunks: NullHeads) is a Head of one column
//     made once: its Set and Reset copy or let go of the shared values
//     first.
//  4. A Chunk is columns plus a per-row Op (Insert, Delete, UpdateDelete,
//     UpdateInsert) and a visibility mask; invisible rows are skipped by
//     everything downstream.
//  5. Chunks have a compact text form for tests ("+ 1 4", "U- 5 3"), parsed
//     and printed by ParseChunk and Chunk.String.
package types
