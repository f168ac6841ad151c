// Package stream is Sluice's dataflow runtime: messages, the executor
// contract, exchange channels, dispatchers, barrier alignment, actors and
// their control channel. The executors themselves live in subpackages
// (stateless, join, agg, topn, mview, source) and are wired from plans by
// package build.
//
// A message's journey, step by step:
//
//  1. The barrier manager injects a Barrier into each source actor's inbox.
//     Source executors (table source, values) interleave it with their data.
//  2. Each actor is one goroutine (Actor.Run) pulling the root of its
//     executor chain (Executor.Next). Executors pull their inputs; a
//     multi-input executor (join, union) reads through Aligned, and a
//     fragment's bottom is a Merge over exchange Inputs; both align
//     barriers, so a barrier passes only after every input's data of its
//     epoch.
//  3. On a barrier each stateful executor seals its state for the epoch;
//     the actor then dispatches the barrier to every output and reports it
//     collected through its BarrierSink. When every actor has collected an
//     epoch, the barrier manager commits it in the store.
//  4. Chunks go through Dispatchers (hash by distribution key over 256
//     vnodes, broadcast, simple) into bounded exchange channels (Output →
//     Input). A full channel blocks the sender: back-pressure. A bulk
//     load's rows may travel still encoded (FreshRows, fresh.go) from a
//     table's source to its materialize and on to its views, whose Merge
//     decodes them unless the chain above takes them as they are.
//
// Control never waits for data. Each actor has a control channel
// (Actor.HandleControl) that acts at once: ControlStop cancels the actor's
// context (every executor loop checks it once per output chunk and every
// channel send selects on it), ControlDetach removes outputs to dropped
// actors and releases a producer blocked sending to them, and rate limit /
// pause change the actor's Throttle, which sources consult per chunk. While
// a view or sink is paused, gates at its inputs queue what arrives and let
// barriers pass (package overtake); while it is paused or throttled, its
// joins let barriers overtake their own work too (join/overtake.go). The
// overtaken work is checkpointed as state, so the job no longer holds the
// epochs every other job waits for.
package stream
