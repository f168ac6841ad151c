package storage

import (
	"context"
	"runtime"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/sluice-db/sluice/internal/types"
)

// BenchmarkTailApply applies 1024-row insert records of a 7-column bid row
// with a hidden row id to a table's tail, and reports the live heap the
// tail holds per row: as tree entries (a record that is not a fresh run),
// as fresh runs (what a bulk COPY is), and as tree entries written out to
// runs every 8 MiB (a bulk COPY into a table with a primary key), on disk.
func BenchmarkTailApply(b *testing.B) {
	b.Run("tree", func(b *testing.B) { benchTailApply(b, false, nil) })
	b.Run("fresh", func(b *testing.B) { benchTailApply(b, true, nil) })
	b.Run("runs", func(b *testing.B) {
		defer func(n int) { tailSpillBytes = n }(tailSpillBytes)
		tailSpillBytes = 8 << 20
		s, err := Open(context.Background(), Options{FS: vfs.Default, Dir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		benchTailApply(b, false, s)
	})
}

func benchTailApply(b *testing.B, fresh bool, s *Store) {
	desc := TableDesc{ID: 9, Types: []types.Type{types.TInt64, types.TInt64, types.TInt64, types.TVarchar,
		types.TVarchar, types.TTimestamp, types.TVarchar, types.TInt64}, PK: []int{7}, DistKey: []int{7}}
	lay, err := newLayout(desc)
	if err != nil {
		b.Fatal(err)
	}
	t := newTail(lay)
	t.store = s
	bld := types.NewBuilder(desc.Types, 1024)
	var ms0, ms1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms0)
	b.ResetTimer()
	for i := range b.N {
		c := bld.Append(types.Insert, types.Row{int64(i % 10000), int64(i), int64(i * 7), "channel-3",
			"https://www.nexmark.com/abc/item.htm?query=1", types.DTimestamp(int64(i) * 1000), "", int64(i)})
		if i == b.N-1 {
			c = bld.Take()
		}
		if c != nil {
			if fresh {
				if added, _ := t.addFresh(uint64(i), c, nil); added {
					continue
				}
			}
			if err := t.apply(uint64(i), c); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.StopTimer()
	runtime.GC()
	runtime.ReadMemStats(&ms1)
	b.ReportMetric(float64(int64(ms1.HeapAlloc)-int64(ms0.HeapAlloc))/float64(b.N), "heap-B/row")
	n := t.tree.Len()
	for _, r := range t.runs {
		n += r.n
	}
	for _, r := range t.fresh {
		n += r.c.Capacity()
	}
	if n != b.N {
		b.Fatalf("tail holds %d rows, want %d", n, b.N)
	}
	runtime.KeepAlive(t)
}

// BenchmarkTailScanOverlappingRuns scans a table whose tail holds 16 runs
// of 16 384 rows each, every run spread over the whole key range (the
// sorted pieces of a bulk load whose keys came in no order), before any
// epoch commits them.
func BenchmarkTailScanOverlappingRuns(b *testing.B) {
	ctx := context.Background()
	s := openMem(b, nil)
	desc := TableDesc{ID: 9, Types: []types.Type{types.TInt64, types.TInt64, types.TInt64}, PK: []int{0}, DistKey: []int{0}}
	const runs, rows = 16, 16384
	for r := range int64(runs) {
		c := types.NewBuilder(desc.Types, rows+1)
		for i := range int64(rows) {
			c.Append(types.Insert, types.Row{i*runs + r, i % 1000, i})
		}
		if _, err := s.WriteDML(ctx, desc.ID, DMLWrite{Payload: []byte{1}, Tail: &desc, Rows: c.Take()}); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for range b.N {
		sn, err := s.LatestSnapshot(ctx, true)
		if err != nil {
			b.Fatal(err)
		}
		it, err := sn.ScanTable(ctx, desc)
		if err != nil {
			b.Fatal(err)
		}
		if n := len(drain(b, it)); n != runs*rows {
			b.Fatalf("scan: %d rows, want %d", n, runs*rows)
		}
		_ = sn.Close()
	}
}
