package storage

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/sluice-db/sluice/internal/types"
)

// openLate opens a store whose epochs are late from their first fresh row
// on, and whose tables write their fresh rows to a file at every chunk.
func openLate(t *testing.T, fs vfs.FS) *Store {
	t.Helper()
	s, err := Open(context.Background(), Options{FS: fs, Dir: "db", PresealAfter: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// withPresealFrom sets presealFrom for the test.
func withPresealFrom(t *testing.T, n int) {
	old := presealFrom
	presealFrom = n
	t.Cleanup(func() { presealFrom = old })
}

// TestLateEpochWritesFreshRowsAsTheyCome: in a late epoch every chunk of
// fresh rows goes to a file at once, its memory let go; reads find the
// rows in the files, also once a merge has folded them together; the
// seal stages them and the commit holds every row, leaving no file.
func TestLateEpochWritesFreshRowsAsTheyCome(t *testing.T) {
	withPresealFrom(t, 1)
	ctx := context.Background()
	fs := vfs.NewMem()
	s := openLate(t, fs)
	desc := rowIDDesc(7)
	tbl := mustOpenTable(t, s, desc, 1, nil)
	for lo := int64(1); lo < 100; lo += 10 {
		insertFreshRange(t, tbl, lo, lo+10)
		if tbl.held().Load() != 0 {
			t.Fatalf("after rows %d..%d: %d bytes held in memory, want all in files", lo, lo+9, tbl.held().Load())
		}
		if m := tbl.pre.merge; m != nil {
			<-m.done // let the merge finish, so the next chunk swaps it in
		}
	}
	levels := map[int]int{}
	for _, e := range tbl.pre.files {
		levels[e.level]++
	}
	if levels[1] == 0 || len(tbl.pre.files) >= 10 {
		t.Fatalf("files by level after ten chunks: %v, want merged ones", levels)
	}
	for id := int64(1); id < 102; id++ {
		row, ok, err := tbl.Get(ctx, types.Row{id})
		if want := id <= 100; err != nil || ok != want || ok && row[0] != fmt.Sprint("v", id) {
			t.Fatalf("get %d before the seal: %v %v %v", id, row, ok, err)
		}
	}
	if rows := sealCommitRows(t, s, tbl, 1); len(rows) != 100 {
		t.Fatalf("committed %d rows, want 100", len(rows))
	}
	for id := int64(1); id <= 100; id++ {
		if row, ok, err := tbl.Get(ctx, types.Row{id}); err != nil || !ok || row[0] != fmt.Sprint("v", id) {
			t.Fatalf("get %d after the commit: %v %v %v", id, row, ok, err)
		}
	}
	if names, _ := fs.List(s.ingestDir); len(names) != 0 {
		t.Fatalf("files left after the commit: %v", names)
	}
}

// TestOnTimeEpochKeepsFreshRowsInMemory: an epoch that is not late writes
// nothing before its seal.
func TestOnTimeEpochKeepsFreshRowsInMemory(t *testing.T) {
	withPresealFrom(t, 1)
	s, err := Open(context.Background(), Options{FS: vfs.NewMem(), Dir: "db", PresealAfter: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tbl := mustOpenTable(t, s, rowIDDesc(7), 1, nil)
	insertFreshRange(t, tbl, 1, 50)
	insertFreshRange(t, tbl, 50, 90)
	if tbl.pre != nil || tbl.held().Load() == 0 {
		t.Fatalf("an on-time epoch wrote files (%v) or let its rows go (%d bytes held)", tbl.pre, tbl.held().Load())
	}
}

// TestOverwritesStopPresealing: once an epoch holds fresh rows that
// overwrite, it writes no more files, and the overwrites win over the
// rows written to files before them.
func TestOverwritesStopPresealing(t *testing.T) {
	withPresealFrom(t, 1)
	s := openLate(t, vfs.NewMem())
	desc := rowIDDesc(7)
	tbl := mustOpenTable(t, s, desc, 1, nil)
	insertFreshRange(t, tbl, 1, 20)
	files := len(tbl.pre.files)
	b := types.NewBuilder(desc.Types, 11)
	for id := int64(5); id < 15; id++ {
		b.Append(types.Insert, types.Row{"new", id})
	}
	if ok, err := tbl.OverwriteFresh(b.Take(), []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}); !ok || err != nil {
		t.Fatalf("OverwriteFresh: %v %v", ok, err)
	}
	insertFreshRange(t, tbl, 20, 30)
	if len(tbl.pre.files) != files {
		t.Fatalf("%d files after an overwrite, want still %d", len(tbl.pre.files), files)
	}
	rows := sealCommitRows(t, s, tbl, 1)
	if len(rows) != 29 {
		t.Fatalf("committed %d rows, want 29", len(rows))
	}
	for _, r := range rows {
		id := r[1].(int64)
		want := fmt.Sprint("v", id)
		if id >= 5 && id < 15 {
			want = "new"
		}
		if r[0] != want {
			t.Fatalf("row %d = %v, want %s", id, r, want)
		}
	}
}

// TestPresealedFilesGoWithTheirTable: the files of a table let go before
// its seal (an actor torn down) are removed.
func TestPresealedFilesGoWithTheirTable(t *testing.T) {
	withPresealFrom(t, 1)
	fs := vfs.NewMem()
	s := openLate(t, fs)
	func() {
		tbl := mustOpenTable(t, s, rowIDDesc(7), 1, nil)
		for lo := int64(1); lo < 60; lo += 10 {
			insertFreshRange(t, tbl, lo, lo+10)
		}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		names, _ := fs.List(s.ingestDir)
		if len(names) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("files of a table let go are still there: %v", names)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestPresealedFilesOfAnEarlierOpenSpareTheNext: a table of a closed
// store, collected only once the store is open again, removes its own
// files, not the new open's files of the same table and epoch.
func TestPresealedFilesOfAnEarlierOpenSpareTheNext(t *testing.T) {
	withPresealFrom(t, 1)
	ctx, fs := context.Background(), vfs.NewMem()
	open := func() *Store {
		s, err := Open(ctx, Options{FS: fs, Dir: "db", PresealAfter: time.Nanosecond})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a := open()
	func() {
		tbl := mustOpenTable(t, a, rowIDDesc(7), 1, nil)
		for lo := int64(1); lo < 30; lo += 10 {
			insertFreshRange(t, tbl, lo, lo+10)
		}
	}()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	b := open()
	defer b.Close()
	tbl := mustOpenTable(t, b, rowIDDesc(7), 1, nil)
	for lo := int64(1); lo < 30; lo += 10 {
		insertFreshRange(t, tbl, lo, lo+10)
	}
	for range 5 {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if err := tbl.Seal(1); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(ctx, 1, nil); err != nil {
		t.Fatal(err)
	}
	for id := int64(1); id < 30; id++ {
		if _, ok, err := tbl.Get(ctx, types.Row{id}); !ok || err != nil {
			t.Fatalf("get %d: %v %v", id, ok, err)
		}
	}
}

// sealCommitRows seals and commits epoch and returns the table's
// committed rows.
func sealCommitRows(t *testing.T, s *Store, tbl *StateTable, epoch uint64) []types.Row {
	t.Helper()
	if err := tbl.Seal(epoch); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(context.Background(), epoch, nil); err != nil {
		t.Fatal(err)
	}
	snap, err := s.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	rows, err := snapshotRows(snap, tbl.Desc())
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestDiscardStopsTheActorsMerges: discarding an actor's writes (its job
// dropped) cancels its running merge at once, not when its table is
// collected, and leaves other actors' merges running.
func TestDiscardStopsTheActorsMerges(t *testing.T) {
	withPresealFrom(t, 1)
	s := openLate(t, vfs.NewMem())
	tables := []*StateTable{mustOpenTable(t, s, rowIDDesc(7), 1, nil), mustOpenTable(t, s, rowIDDesc(8), 2, nil)}
	var merges []*presealMerge
	for _, tbl := range tables {
		for lo := int64(1); lo < 40; lo += 10 {
			if lo == 31 {
				// Held, a merge cannot end (it takes the lock last), so
				// it is still running when the discard comes.
				tbl.pre.mu.Lock()
				defer tbl.pre.mu.Unlock()
			}
			insertFreshRange(t, tbl, lo, lo+10)
		}
		if tbl.pre.merge == nil {
			t.Fatalf("table %d: no merge after four files", tbl.Desc().ID)
		}
		merges = append(merges, tbl.pre.merge)
	}
	s.DiscardActor(1)
	if merges[0].ctx.Err() == nil {
		t.Fatal("the discarded actor's merge is still live")
	}
	if merges[1].ctx.Err() != nil {
		t.Fatal("another actor's merge was cancelled")
	}
}
