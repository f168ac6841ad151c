package storage

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/sluice-db/sluice/internal/types"
)

// BenchmarkBulkEpoch loads 500 000 fresh rows of about 100 bytes into a
// table on disk in 4 096-row chunks, as a table's materialize gets a bulk
// COPY, then seals and commits the epoch: the spills, the seal's files
// and their ingestion. It reports the process's CPU per op (user and
// system: most of a bulk epoch's time is the kernel's).
func BenchmarkBulkEpoch(b *testing.B) {
	ctx := context.Background()
	s, err := Open(ctx, Options{FS: vfs.Default, Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	const rows, chunk = 500_000, 4096
	chunks := bulkChunks(rows, chunk)
	cpu0 := processCPU(b)
	epoch := uint64(0)
	for b.Loop() {
		epoch++
		tbl := mustOpenTable(b, s, rowIDDesc(uint32(100+epoch)), ActorID(epoch), nil)
		for _, c := range chunks {
			if ok, err := tbl.InsertFreshEncoded(c.ids, 1, c.rows); !ok || err != nil {
				b.Fatalf("InsertFreshEncoded: %v %v", ok, err)
			}
		}
		if err := tbl.Seal(epoch); err != nil {
			b.Fatal(err)
		}
		if err := s.Commit(ctx, epoch, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric((processCPU(b)-cpu0).Seconds()/float64(b.N), "cpu-s/op")
}

// BenchmarkBulkLoad builds the file of BenchmarkBulkEpoch's 500 000 rows
// with a BulkLoad, in a COPY's 65 536-row pieces (the statement's half of
// writing a bulk load once), without ingesting it: compare its cpu-s/op
// with BenchmarkBulkEpoch's, which also ingests.
func BenchmarkBulkLoad(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	s, err := Open(ctx, Options{FS: vfs.Default, Dir: dir})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	chunks := bulkChunks(500_000, 1<<16)
	cpu0 := processCPU(b)
	n := 0
	for b.Loop() {
		n++
		load, err := s.NewBulkLoad(rowIDDesc(uint32(100 + n)))
		if err != nil {
			b.Fatal(err)
		}
		for _, c := range chunks {
			// A statement hands each piece's buffer over; the benchmark's
			// are shared between iterations, which the load only reads.
			if err := load.Add(c.ids, c.rows); err != nil {
				b.Fatal(err)
			}
		}
		f, err := load.Finish(s.fs.PathJoin(dir, fmt.Sprintf("load-%d.sst", n)))
		if err != nil {
			b.Fatal(err)
		}
		_ = s.fs.Remove(f.Path)
	}
	b.ReportMetric((processCPU(b)-cpu0).Seconds()/float64(b.N), "cpu-s/op")
}

type bulkChunk struct {
	ids  []int64
	rows EncodedRows
}

// bulkChunks encodes rows rows of rowIDDesc, ids from 1, in chunks.
func bulkChunks(rows, chunk int) []bulkChunk {
	lay, err := newLayout(rowIDDesc(1))
	if err != nil {
		panic(err)
	}
	var out []bulkChunk
	for lo := 1; lo <= rows; lo += chunk {
		var c bulkChunk
		for id := lo; id < lo+chunk && id <= rows; id++ {
			start := len(c.rows.Buf)
			v := fmt.Sprintf("bid %d auction %d bidder %d price %d channel-%d https://www.nexmark.com/%d/item.htm", id, id%10007, id%9973, id*31%100000, id%7, id%1009)
			if c.rows.Buf, err = lay.encodeValue(c.rows.Buf, types.Row{v, int64(id)}); err != nil {
				panic(err)
			}
			c.ids = append(c.ids, int64(id))
			c.rows.Spans = append(c.rows.Spans, uint32(start), uint32(len(c.rows.Buf)))
		}
		out = append(out, c)
	}
	return out
}

// processCPU returns the process's user plus system CPU time so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkBulkMultisetEpoch adds 1 000 000 fresh keys (group, value),
// 10 000 groups, to a multiset table on disk, as a bulk load adds to a
// max's value table, then seals, commits and flushes Pebble's memtable
// (so that a batch's flush is counted where it happens). It reports the
// process's CPU per op.
func BenchmarkBulkMultisetEpoch(b *testing.B) {
	for _, ingest := range []int{-1, 0} {
		b.Run(fmt.Sprintf("ingestFrom=%d", ingest), func(b *testing.B) {
			benchBulkMultiset(b, ingest)
		})
	}
}

func benchBulkMultiset(b *testing.B, ingestFrom int) {
	ctx := context.Background()
	s, err := Open(ctx, Options{FS: vfs.Default, Dir: b.TempDir(), IngestFrom: ingestFrom})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	const keys, groups = 1_000_000, 10_000
	cpu0 := processCPU(b)
	epoch := uint64(0)
	for b.Loop() {
		epoch++
		d := kvDesc(uint32(100 + epoch))
		d.Types[1] = types.TInt64
		tbl := mustOpenTable(b, s, d, ActorID(epoch), nil)
		for i := range int64(keys) {
			if _, _, err := tbl.AddCount(ctx, types.Row{i % groups, i*7919%keys + 1}, 1, true); err != nil {
				b.Fatal(err)
			}
		}
		if err := tbl.Seal(epoch); err != nil {
			b.Fatal(err)
		}
		if err := s.Commit(ctx, epoch, nil); err != nil {
			b.Fatal(err)
		}
		if err := s.db.Flush(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric((processCPU(b)-cpu0).Seconds()/float64(b.N), "cpu-s/op")
}
