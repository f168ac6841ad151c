package storage

import (
	"runtime"
	"testing"

	"github.com/sluice-db/sluice/internal/types"
)

// BenchmarkTailApply applies 1024-row insert records of a 7-column bid row
// with a hidden row id to a table's tail, and reports the live heap the
// tail holds per row: as tree entries (a record that is not a fresh run)
// and as fresh runs (what a bulk COPY is).
func BenchmarkTailApply(b *testing.B) {
	b.Run("tree", func(b *testing.B) { benchTailApply(b, false) })
	b.Run("fresh", func(b *testing.B) { benchTailApply(b, true) })
}

func benchTailApply(b *testing.B, fresh bool) {
	desc := TableDesc{ID: 9, Types: []types.Type{types.TInt64, types.TInt64, types.TInt64, types.TVarchar,
		types.TVarchar, types.TTimestamp, types.TVarchar, types.TInt64}, PK: []int{7}, DistKey: []int{7}}
	lay, err := newLayout(desc)
	if err != nil {
		b.Fatal(err)
	}
	t := newTail(lay)
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
	for _, r := range t.fresh {
		n += r.c.Capacity()
	}
	if n != b.N {
		b.Fatalf("tail holds %d rows, want %d", n, b.N)
	}
	runtime.KeepAlive(t)
}
