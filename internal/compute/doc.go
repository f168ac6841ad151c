// Package compute runs streaming jobs: it turns a deployed plan (fragments
// with actor ids) into actors, exchange channels and dispatchers, injects
// barriers into source actors, and carries out control commands on
// actors at once.
//
// The flow for one job, step by step:
//
//  1. Prepare: for every fragment, one actor shell per actor id; for every
//     dispatch edge, a bounded channel per (upstream actor, downstream
//     actor) pair the dispatch kind connects; each actor's executor chain is
//     built from the fragment's plan (package build), its Merge nodes
//     reading the channels.
//  2. Edges from actors of other, running jobs (backfill of an existing
//     table or view) become dispatchers that the meta side adds to those
//     actors with the Add mutation of the new job's first barrier; in
//     recovery every job is prepared before any actor starts, so they are
//     simply part of the upstream actors' dispatchers.
//  3. Start: each actor runs in the job's task.Group. An actor that fails
//     on its own (not through cancellation) is reported to the meta side,
//     which recovers.
//  4. Teardown of a dropped job: upstream actors of other jobs detach their
//     outputs to it (releasing any blocked send), its actors are cancelled,
//     and the node waits for their goroutines to exit.
//
// In cluster mode the same operations arrive as messages from meta; here
// they are method calls.
package compute
