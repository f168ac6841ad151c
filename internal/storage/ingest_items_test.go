package storage

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/sluice-db/sluice/internal/types"
)

// countsEpoch is one epoch of AddCount calls on a kvDesc multiset: keys
// lo..hi-1 of name "a" get delta each.
type countsEpoch struct {
	lo, hi int64
	delta  int64
}

// addCounts applies e to tbl; newKeys says the keys have no committed row.
func addCounts(t testing.TB, tbl *StateTable, e countsEpoch, newKeys bool) {
	t.Helper()
	for k := e.lo; k < e.hi; k++ {
		if _, _, err := tbl.AddCount(context.Background(), types.Row{k, "a"}, e.delta, newKeys); err != nil {
			t.Fatal(err)
		}
	}
}

// multisetRows is the committed rows of a kvDesc table, in key order.
func multisetRows(t testing.TB, s *Store, desc TableDesc) string {
	t.Helper()
	snap, err := s.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	it, err := snap.ScanTable(context.Background(), desc)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := collect(context.Background(), it, 0)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(rows)
}

// TestFreshKeysAreIngested: a seal of many keys no layer held writes them
// to a file the commit ingests; keys that were held (committed, or in a
// sealed epoch not yet committed, even as a tombstone) go through the
// batch, and every count comes out as through batches alone.
func TestFreshKeysAreIngested(t *testing.T) {
	ctx := context.Background()
	desc := kvDesc(1)
	epochs := []struct {
		counts []countsEpoch
		commit bool
	}{
		{[]countsEpoch{{0, 300, 2}}, true},                       // all fresh
		{[]countsEpoch{{200, 500, 1}, {0, 50, -2}}, false},       // 300..499 fresh; 0..49 deleted
		{[]countsEpoch{{0, 100, 3}, {450, 600, 1}}, true},        // 0..49 held as tombstones; 500..599 fresh
		{[]countsEpoch{{1000, 1100, 1}, {1000, 1050, -1}}, true}, // fresh, half deleted again
	}
	var got [2]string
	for i, ingestFrom := range []int{-1, 1} {
		s := openIngest(t, vfs.NewMem(), ingestFrom)
		tbl := mustOpenTable(t, s, desc, 1, nil)
		for e, ep := range epochs {
			for _, c := range ep.counts {
				addCounts(t, tbl, c, false)
			}
			if err := tbl.Seal(uint64(e + 1)); err != nil {
				t.Fatal(err)
			}
			if ep.commit {
				if err := s.Commit(ctx, uint64(e+1), nil); err != nil {
					t.Fatal(err)
				}
			}
		}
		got[i] = multisetRows(t, s, desc)
		ingested := s.db.Metrics().Ingest.Count
		if (ingestFrom == 1) != (ingested > 0) {
			t.Fatalf("ingest from %d: %d ingestions", ingestFrom, ingested)
		}
	}
	if got[0] != got[1] {
		t.Fatalf("counts through files differ from counts through batches:\n got %s\nwant %s", got[1], got[0])
	}
	for _, want := range []string{"[0 a 3]", "[49 a 3]", "[50 a 5]", "[299 a 3]", "[450 a 2]", "[599 a 1]", "[1099 a 1]"} {
		if !strings.Contains(got[1], want) {
			t.Errorf("committed rows lack %s", want)
		}
	}
	if strings.Contains(got[1], "[1000 a") {
		t.Error("a fresh key deleted within its epoch was committed")
	}
}

// TestCrashDuringFreshKeyIngest: a crash in the commit of an epoch whose
// fresh keys went to a file, and whose other writes update committed
// keys, leaves exactly the previous epoch after recovery.
func TestCrashDuringFreshKeyIngest(t *testing.T) {
	for _, step := range []string{"intent", "ingested"} {
		t.Run(step, func(t *testing.T) {
			ctx := context.Background()
			fs := vfs.NewCrashableMem()
			s := openIngest(t, fs, 1)
			desc := kvDesc(1)
			tbl := mustOpenTable(t, s, desc, 1, nil)
			addCounts(t, tbl, countsEpoch{0, 100, 1}, true)
			if err := tbl.Seal(1); err != nil {
				t.Fatal(err)
			}
			if err := s.Commit(ctx, 1, nil); err != nil {
				t.Fatal(err)
			}
			want := multisetRows(t, s, desc)
			addCounts(t, tbl, countsEpoch{50, 200, 1}, false) // 50..99 updated, 100..199 fresh
			if err := tbl.Seal(2); err != nil {
				t.Fatal(err)
			}
			s.crashAt = func(at string) error {
				if at == step {
					return errSimulatedCrash
				}
				return nil
			}
			if err := s.Commit(ctx, 2, nil); err == nil {
				t.Fatal("the commit went through its crash point")
			}
			crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0, RNG: rand.New(rand.NewPCG(1, 2))})
			_ = s.Close()
			s2 := openIngest(t, crashed, 1)
			if got := multisetRows(t, s2, desc); got != want {
				t.Fatalf("after the crash:\n got %s\nwant %s", got, want)
			}
		})
	}
}

// TestEpochSizesSwing writes epochs of very different sizes (a bulk epoch,
// then a few rows, then a bulk one again) through Insert and AddCount,
// with seals through batches and through files, and checks every
// committed row: a seal's buffers are reused and let go between such
// epochs, and a reused buffer must never leak into another epoch's run.
func TestEpochSizesSwing(t *testing.T) {
	ctx := context.Background()
	sizes := []int64{70_000, 7, 1, 70_000, 3, 20_000, 2}
	for _, ingestFrom := range []int{-1, 1} {
		s := openIngest(t, vfs.NewMem(), ingestFrom)
		kv := mustOpenTable(t, s, kvDesc(1), 1, nil)
		ms := mustOpenTable(t, s, kvDesc(2), 1, nil)
		want := map[int64]int64{}
		for e, n := range sizes {
			for i := range n {
				k := int64(e)*100_000 + i
				if err := kv.Insert(types.Row{k, "v", k * 3}); err != nil {
					t.Fatal(err)
				}
				if _, _, err := ms.AddCount(ctx, types.Row{k % 1000, "m"}, 1, false); err != nil {
					t.Fatal(err)
				}
				want[k%1000]++
			}
			for _, tbl := range []*StateTable{kv, ms} {
				if err := tbl.Seal(uint64(e + 1)); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Commit(ctx, uint64(e+1), nil); err != nil {
				t.Fatal(err)
			}
		}
		rows := scanAll(t, kv, nil)
		total := int64(0)
		for _, n := range sizes {
			total += n
		}
		if int64(len(rows)) != total {
			t.Fatalf("ingest from %d: %d rows, want %d", ingestFrom, len(rows), total)
		}
		for _, r := range rows {
			if r[1] != "v" || r[2] != r[0].(int64)*3 {
				t.Fatalf("ingest from %d: row %v", ingestFrom, r)
			}
		}
		counts := scanAll(t, ms, nil)
		if len(counts) != len(want) {
			t.Fatalf("ingest from %d: %d counts, want %d", ingestFrom, len(counts), len(want))
		}
		for _, r := range counts {
			if r[2] != want[r[0].(int64)] {
				t.Fatalf("ingest from %d: count %v, want %d", ingestFrom, r, want[r[0].(int64)])
			}
		}
	}
}

// TestFreshKeysDeletedAgainWriteNothing: rows inserted as fresh keys and
// deleted within the same epoch reach neither a file nor the batch (a
// join side whose rows expire in the epoch they came in), while a
// deleted key that was committed still gets its tombstone.
func TestFreshKeysDeletedAgainWriteNothing(t *testing.T) {
	ctx := context.Background()
	s := openIngest(t, vfs.NewMem(), -1)
	desc := kvDesc(1)
	tbl := mustOpenTable(t, s, desc, 1, nil)
	row := func(k int64) types.Row { return types.Row{k, strings.Repeat("x", 100), k} }
	epoch := func(e uint64, write func()) uint64 {
		t.Helper()
		before := s.db.Metrics().WAL.BytesIn
		write()
		if err := tbl.Seal(e); err != nil {
			t.Fatal(err)
		}
		if err := s.Commit(ctx, e, nil); err != nil {
			t.Fatal(err)
		}
		return s.db.Metrics().WAL.BytesIn - before
	}
	kept := epoch(1, func() {
		for k := range int64(1000) {
			if err := tbl.InsertAbsent(row(k)); err != nil {
				t.Fatal(err)
			}
		}
	})
	gone := epoch(2, func() {
		for k := int64(1000); k < 2000; k++ {
			if err := tbl.InsertAbsent(row(k)); err != nil {
				t.Fatal(err)
			}
			if err := tbl.Delete(row(k)); err != nil {
				t.Fatal(err)
			}
		}
	})
	deleted := epoch(3, func() {
		for k := range int64(1000) {
			if err := tbl.Delete(row(k)); err != nil {
				t.Fatal(err)
			}
		}
	})
	if gone*20 > deleted || deleted == 0 || kept == 0 {
		t.Errorf("WAL bytes: 1000 fresh rows %d, 1000 fresh rows deleted again %d, 1000 committed rows deleted %d", kept, gone, deleted)
	}
	if rows := multisetRows(t, s, desc); rows != "[]" {
		t.Errorf("committed rows %s, want none", rows)
	}
}

// TestFreshKeyDeletedAgainHidesNoLaterRow: a run left with only a fresh key
// deleted again holds no writes (HoldsNoWrites), so a caller may keep a
// later epoch's row of that key as a fresh row; no layer may then hide
// that row behind the old epoch's delete, neither a read nor the next
// count.
func TestFreshKeyDeletedAgainHidesNoLaterRow(t *testing.T) {
	ctx := context.Background()
	s := openIngest(t, vfs.NewMem(), -1)
	desc := kvDesc(1)
	tbl := mustOpenTable(t, s, desc, 1, nil)
	key := types.Row{int64(1), "a"}
	add := func(k types.Row, delta int64, uncommittedOnly bool) (int64, int64) {
		t.Helper()
		before, after, err := tbl.AddCount(ctx, k, delta, uncommittedOnly)
		if err != nil {
			t.Fatal(err)
		}
		return before, after
	}
	add(key, 1, true)
	add(key, -1, false)
	if err := tbl.Seal(1); err != nil { // not committed yet
		t.Fatal(err)
	}
	if !tbl.HoldsNoWrites() {
		t.Fatal("a run of one fresh key deleted again holds writes")
	}
	b := types.NewBuilder(desc.Types, 2)
	b.Append(types.Insert, types.Row{int64(1), "a", int64(5)})
	if ok, err := tbl.InsertFresh(b.Take(), []int{0}); !ok || err != nil {
		t.Fatalf("InsertFresh: %v %v", ok, err)
	}
	add(types.Row{int64(2), "b"}, 1, false) // an unrelated write: the overlay is not empty
	if row, ok, err := tbl.Get(ctx, key); err != nil || !ok || row[2] != int64(5) {
		t.Fatalf("Get = %v, %v, %v; want the fresh row, count 5", row, ok, err)
	}
	if before, after := add(key, -1, false); before != 5 || after != 4 {
		t.Fatalf("AddCount -1 = %d, %d; want 5, 4", before, after)
	}
	if err := tbl.Seal(2); err != nil {
		t.Fatal(err)
	}
	for e := uint64(1); e <= 2; e++ {
		if err := s.Commit(ctx, e, nil); err != nil {
			t.Fatal(err)
		}
	}
	if rows, want := multisetRows(t, s, desc), "[[2 b 1] [1 a 4]]"; rows != want {
		t.Errorf("committed rows %s, want %s", rows, want)
	}
}
