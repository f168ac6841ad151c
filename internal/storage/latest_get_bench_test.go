package storage

import (
	"context"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/sluice-db/sluice/internal/types"
)

// BenchmarkLatestGetMiss is an INSERT's key check: a point read of a new
// key, past every committed one, in a store on disk whose table was
// written over 40 epochs (sstables in several levels, rows in the
// memtable).
func BenchmarkLatestGetMiss(b *testing.B) {
	ctx := context.Background()
	s, err := Open(ctx, Options{FS: vfs.Default, Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	desc := kvDesc(1)
	tbl := mustOpenTable(b, s, desc, 1, nil)
	const epochs, perEpoch = 40, 5000
	for e := range uint64(epochs) {
		for i := range perEpoch {
			k := int64(e)*perEpoch + int64(i)
			if err := tbl.Insert(types.Row{k, "name", k}); err != nil {
				b.Fatal(err)
			}
		}
		if err := tbl.Seal(e + 1); err != nil {
			b.Fatal(err)
		}
		if err := s.Commit(ctx, e+1, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	pk := types.Row{int64(0), "name"}
	for i := 0; b.Loop(); i++ {
		pk[0] = int64(epochs*perEpoch + i)
		if _, ok, err := s.LatestGet(ctx, desc, pk); err != nil || ok {
			b.Fatalf("LatestGet(%d): found %v, err %v", i, ok, err)
		}
	}
}
