// Package connector holds the connectors that bring rows into Sluice from
// outside: the generators (nexmark, datagen) now, Kafka and Postgres CDC
// next. A connector is named by a source's or table's WITH (connector =
// …) and configured by the other options.
//
// # The contract
//
// Open validates a Spec — the connector, its options and the declared
// columns — and returns a Source. Every option must be one the connector
// takes: an unknown or misspelt one is an error naming it (22023), never
// ignored, and one RisingWave knows but Sluice does not implement is 0A000.
// A Source is cut into a fixed number of splits (Splits), each an
// independent, ordered stream of rows with a position: the offset, an
// int64 that only grows. The streaming engine assigns the splits to a
// source fragment's actors and records each split's offset with every
// checkpoint, in the same commit as the state derived from its rows.
// After a crash, Open(split, offset) resumes exactly after the last
// committed row, and a split yields the same rows from the same offset
// again (the generators are deterministic; a log like Kafka's keeps them).
// That is what makes a source exactly-once.
//
// A Reader never blocks: Read returns the rows ready now, or none and
// when to ask again (a paced generator's next due time), or that the split
// is exhausted. So a source actor stays responsive to barriers and to its
// control channel (pause, rate limit, drop) whatever the connector does.
//
// A Source that is a Narrower is told which columns the executors above
// read, before any split opens. The nexmark connector leaves the others
// NULL, heads of one column of NULLs per reader, and skips generating the
// extra field: a query that reads two of a bid's seven columns allocates
// for two.
//
// # Sinks
//
// OpenSink validates a SinkSpec the same way (sink.go): the connector,
// every option, and RisingWave's type = 'append-only' | 'upsert' with
// force_append_only. Each actor of a sink's job writes through a
// SinkWriter of its own: Write with each chunk, Barrier at each epoch's
// end, before the epoch can commit. The blackhole connector takes every
// row and keeps none; Kafka comes next.
//
// # Row ids
//
// A source or table without a primary key gets a hidden _row_id column.
// A connector fills it from the row's position — a generator's global
// row or event index — so a row replayed after recovery has the same id,
// and ids of different splits never collide.
package connector
