// Package runtimecfg holds the Go runtime settings a Sluice server process
// runs with, and puts them in place before the runtime starts (they are
// read from GODEBUG at process start only).
//
// madvdontneed=0: the runtime hands heap it has freed back to the kernel,
// by default on Linux with MADV_DONTNEED, and the next allocation there
// faults each page in again. A bulk load cycles its rows through the
// heap, and on the project's 2-core VM a minor fault costs 10-20 µs: a
// million-row COPY and its FLUSH took 15 000-30 000 of them, about a sixth
// of their CPU. With MADV_FREE the kernel takes the pages back only when
// it needs memory, so a page reused before then does not fault: 50-10 000
// faults a load, 1.48 against 1.77 CPU s (medians of twelve loads each,
// side by side; docs/BENCHMARKS.md). The cost is in reporting: RSS counts
// freed pages until the kernel reclaims them, which it does under memory
// pressure (a cgroup's limit too) before anything is killed. A GODEBUG
// that sets madvdontneed itself is left as it is.
//
// The collector (gc.go): TuneGC, called once a server process runs, sets
// a garbage-collection target of GCPercent and a soft memory limit of
// three quarters of the machine's (or the cgroup's) memory, unless $GOGC
// or $GOMEMLIMIT chose otherwise. MachineMemory is also what the batch
// executor's query memory pool is sized from.
package runtimecfg
