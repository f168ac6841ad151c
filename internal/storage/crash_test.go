package storage

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/sluice-db/sluice/internal/types"
)

// TestCrashKeepsExactlyCommittedEpoch stages several epochs, commits some,
// then simulates a crash that loses every unsynced write (and, in later
// rounds, keeps a random part of them). After reopening, the committed
// epoch, its data, its offsets and acknowledged DML records are all there,
// and nothing of the uncommitted epochs is.
func TestCrashKeepsExactlyCommittedEpoch(t *testing.T) {
	for _, pct := range []int{0, 50, 100} {
		t.Run(fmt.Sprintf("unsynced%d", pct), func(t *testing.T) {
			ctx := context.Background()
			fs := vfs.NewCrashableMem()
			s, err := Open(ctx, Options{FS: fs, Dir: "db"})
			if err != nil {
				t.Fatal(err)
			}
			desc := kvDesc(3)
			tbl := mustOpenTable(t, s, desc, 1, nil)
			write := func(epoch uint64, ks ...int64) {
				for _, k := range ks {
					if err := tbl.Insert(types.Row{k, "e", int64(epoch)}); err != nil {
						t.Fatal(err)
					}
				}
				if err := tbl.Seal(epoch); err != nil {
					t.Fatal(err)
				}
			}
			write(1, 1, 2, 3)
			if err := s.Commit(ctx, 1, map[string][]byte{"src/1": []byte("off1")}); err != nil {
				t.Fatal(err)
			}
			seq, err := s.AppendDML(ctx, 3, []byte("insert 9"))
			if err != nil {
				t.Fatal(err)
			}
			// Commit 3 below must be the last synced write, so the test
			// notices if a commit were not synced itself.
			write(2, 2, 4)
			if err := tbl.Delete(types.Row{int64(1), "e", nil}); err != nil {
				t.Fatal(err)
			}
			if err := tbl.Seal(3); err != nil { // epoch 3: only the delete
				t.Fatal(err)
			}
			if err := s.StageMeta(3, "src/1", []byte("off3")); err != nil {
				t.Fatal(err)
			}
			if err := s.Commit(ctx, 3, nil); err != nil {
				t.Fatal(err)
			}
			write(4, 5, 6) // sealed, never committed
			if err := s.StageMeta(4, "src/1", []byte("off4")); err != nil {
				t.Fatal(err)
			}
			if err := tbl.Insert(types.Row{int64(7), "e", int64(5)}); err != nil { // never sealed
				t.Fatal(err)
			}

			crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: pct, RNG: rand.New(rand.NewPCG(uint64(pct), 1))})
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s2, err := Open(ctx, Options{FS: crashed, Dir: "db"})
			if err != nil {
				t.Fatal(err)
			}
			defer s2.Close()
			if got := s2.CommittedEpoch(); got != 3 {
				t.Fatalf("committed epoch after crash = %d, want 3", got)
			}
			snap, err := s2.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			defer snap.Close()
			if snap.Epoch() != 3 {
				t.Fatalf("snapshot epoch = %d, want 3", snap.Epoch())
			}
			it, err := snap.ScanTable(ctx, desc)
			if err != nil {
				t.Fatal(err)
			}
			rows := drain(t, it)
			sortPK(rows)
			want := []types.Row{{int64(2), "e", int64(2)}, {int64(3), "e", int64(1)}, {int64(4), "e", int64(2)}}
			if fmt.Sprint(rows) != fmt.Sprint(want) {
				t.Fatalf("rows after crash:\n got %v\nwant %v", rows, want)
			}
			off, ok, err := s2.Meta("src/1")
			if err != nil || !ok || string(off) != "off3" {
				t.Fatalf("offset after crash = %q,%v,%v; want off3", off, ok, err)
			}
			recs, err := s2.ReadDML(3, 1, 10)
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) != 1 || recs[0].Seq != seq || string(recs[0].Payload) != "insert 9" {
				t.Fatalf("dml after crash = %v", recs)
			}
			// The next append continues the sequence.
			next, err := s2.AppendDML(ctx, 3, []byte("more"))
			if err != nil || next != seq+1 {
				t.Fatalf("next seq = %d,%v; want %d", next, err, seq+1)
			}
			// Sealing the lost epoch again works: it was never committed.
			tbl2 := mustOpenTable(t, s2, desc, 1, nil)
			if err := tbl2.Insert(types.Row{int64(8), "e", int64(4)}); err != nil {
				t.Fatal(err)
			}
			if err := tbl2.Seal(4); err != nil {
				t.Fatal(err)
			}
			if err := s2.Commit(ctx, 4, nil); err != nil {
				t.Fatal(err)
			}
			got := scanAll(t, tbl2, types.Row{int64(8)})
			if len(got) != 1 || !slices.Equal(got[0], types.Row{int64(8), "e", int64(4)}) {
				t.Fatalf("row of re-run epoch 4 = %v", got)
			}
		})
	}
}
