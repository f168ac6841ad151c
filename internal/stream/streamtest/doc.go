// Package streamtest holds what the tests of the stream executor packages
// (agg, join, topn, mview, stateless, source) share. It is imported by
// tests only; production code never needs it.
//
// An executor test goes, step by step:
//
//  1. OpenStore gives an in-memory state store that closes when the test
//     (or rapid property run) ends.
//  2. Script turns a short text ("barrier", chunk rows such as "+ 1 2",
//     "stop") into the messages a stream.MockSource feeds the executor.
//  3. PullUntilStop (or PullUntilBarrier) pulls the executor's output, and
//     Render prints each message the way expectations spell it.
//
// Benchmarks feed executors from a CycleSource, which replays chunks with
// a barrier every few of them for as long as it is pulled.
package streamtest
