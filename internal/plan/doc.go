// Package plan describes streaming jobs as data: a graph of fragments, each
// a tree of Nodes, that the meta side builds from SQL and the compute side
// turns into running actors (stream.Build). Plans are plain structs that
// round-trip through JSON, because in cluster mode they cross the network;
// a malformed plan is rejected by the builder with an error, never a panic.
//
// The flow:
//
//  1. The planner produces a Job: fragments connected by exchanges.
//  2. The scheduler gives each fragment a parallelism and each actor a set
//     of vnodes (the hash space of the fragment's distribution key).
//  3. The compute side builds each actor's executor chain from its
//     fragment's Node tree; a Merge node receives from the upstream
//     fragment's dispatcher.
package plan
