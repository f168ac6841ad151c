package storage

import (
	"context"
	"testing"

	"github.com/sluice-db/sluice/internal/types"
)

// BenchmarkStateTableInsertSeal measures the write path of one epoch of
// 1024 rows: Insert into the overlay, Seal into a staged batch, and a
// synced Commit (in-memory filesystem, so the sync is cheap).
func BenchmarkStateTableInsertSeal(b *testing.B) {
	ctx := context.Background()
	s := openMem(b, nil)
	tbl := mustOpenTable(b, s, kvDesc(1), 1, nil)
	const perEpoch = 1024
	b.ReportAllocs()
	epoch := uint64(0)
	row := types.Row{int64(0), "name", int64(0)}
	for i := 0; b.Loop(); i++ {
		row[0], row[2] = int64(i), int64(i)
		if err := tbl.Insert(row); err != nil {
			b.Fatal(err)
		}
		if i%perEpoch == perEpoch-1 {
			epoch++
			if err := tbl.Seal(epoch); err != nil {
				b.Fatal(err)
			}
			if err := s.Commit(ctx, epoch, nil); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func benchGet(b *testing.B, hit bool) {
	ctx := context.Background()
	s := openMem(b, nil)
	tbl := mustOpenTable(b, s, kvDesc(1), 1, nil)
	const n = 10000
	for i := range n {
		if err := tbl.Insert(types.Row{int64(i), "name", int64(i)}); err != nil {
			b.Fatal(err)
		}
	}
	if err := tbl.Seal(1); err != nil {
		b.Fatal(err)
	}
	if err := s.Commit(ctx, 1, nil); err != nil {
		b.Fatal(err)
	}
	name := "name"
	if !hit {
		name = "absent"
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		_, ok, err := tbl.Get(ctx, types.Row{int64(i % n), name})
		if err != nil || ok != hit {
			b.Fatalf("get: %v %v", ok, err)
		}
	}
}

// BenchmarkGetHit reads committed rows (overlay empty after commit).
func BenchmarkGetHit(b *testing.B) { benchGet(b, true) }

// BenchmarkGetMiss reads absent keys.
func BenchmarkGetMiss(b *testing.B) { benchGet(b, false) }
