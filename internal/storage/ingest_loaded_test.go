package storage

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// loadFile builds a bulk load's file of desc holding ids lo..hi in the
// segment directory.
func loadFile(t *testing.T, s *Store, desc TableDesc, lo, hi int64) *LoadedFile {
	t.Helper()
	load, err := s.NewBulkLoad(desc)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for id := lo; id <= hi; id++ {
		ids = append(ids, id)
	}
	if err := load.Add(ids, encodeFreshRows(ids)); err != nil {
		t.Fatal(err)
	}
	path, err := s.NewLoadPath(desc.ID)
	if err != nil {
		t.Fatal(err)
	}
	f, err := load.Finish(path)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// loadedRows is committedRows of rows lo..hi of encodeFreshRows, but skip.
func loadedRows(lo, hi int64, skip ...int64) string {
	var rows []types.Row
	for id := lo; id <= hi; id++ {
		if !slices.Contains(skip, id) {
			rows = append(rows, types.Row{fmt.Sprint("v", id), id})
		}
	}
	slices.SortFunc(rows, types.CompareRows)
	return fmt.Sprint(rows)
}

// stageAndCommit stages f for the next epoch, by a source of owner 9, and
// commits that epoch.
func stageAndCommit(t *testing.T, s *Store, desc TableDesc, f *LoadedFile) {
	t.Helper()
	epoch := s.CommittedEpoch() + 1
	if err := s.StageLoadedFile(epoch, 9, desc.ID, s.TableGens(desc.ID), f); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(context.Background(), epoch, nil); err != nil {
		t.Fatal(err)
	}
}

// alternateVNodes returns every other vnode, from first.
func alternateVNodes(first int) types.Bitmap {
	var vn types.Bitmap
	for v := first; v < codec.VNodeCount; v += 2 {
		vn.Set(v)
	}
	return vn
}

// exists reports whether path exists on fs.
func exists(fs vfs.FS, path string) bool {
	_, err := fs.Stat(path)
	return err == nil
}

// TestStagedLoadedFileCommits: a staged bulk load's file is ingested by
// its epoch's commit, with the epoch's batch writes newer than its rows,
// and stays where it is (the log removes it).
func TestStagedLoadedFileCommits(t *testing.T) {
	ctx := context.Background()
	s := openIngest(t, vfs.NewMem(), 1)
	desc := rowIDDesc(5)
	f := loadFile(t, s, desc, 1, 40)
	if err := s.StageLoadedFile(1, 9, desc.ID, s.TableGens(desc.ID), f); err != nil {
		t.Fatal(err)
	}
	tbl := mustOpenTable(t, s, desc, 1, nil)
	if err := tbl.Delete(types.Row{"v7", int64(7)}); err != nil {
		t.Fatal(err)
	}
	if err := tbl.Seal(1); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(ctx, 1, nil); err != nil {
		t.Fatal(err)
	}
	want := loadedRows(1, 40, 7)
	if got := committedRows(t, s, desc); got != want {
		t.Fatalf("after the commit:\n got %s\nwant %s", got, want)
	}
	if !exists(s.fs, f.Path) {
		t.Fatal("the commit removed the log's file")
	}
}

// TestFailedCommitOfLoadedFile: a commit of a bulk load's file that fails
// or crashes after its intent or its ingest leaves none of its rows, and
// the file, which the log still names, stays: staged again, it commits.
func TestFailedCommitOfLoadedFile(t *testing.T) {
	for _, step := range []string{"intent", "ingested"} {
		for _, crash := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/crash=%v", step, crash), func(t *testing.T) {
				ctx := context.Background()
				fs := vfs.NewCrashableMem()
				s, err := Open(ctx, Options{FS: fs, Dir: "db", IngestFrom: 1})
				if err != nil {
					t.Fatal(err)
				}
				desc := rowIDDesc(5)
				f := loadFile(t, s, desc, 1, 30)
				if err := s.StageLoadedFile(1, 9, desc.ID, s.TableGens(desc.ID), f); err != nil {
					t.Fatal(err)
				}
				if crashed := failCommitAt(t, s, fs, 1, step, crash, desc, "[]"); crashed != nil {
					s = openIngest(t, crashed, 1)
				} else if s, err = Open(ctx, Options{FS: fs, Dir: "db", IngestFrom: 1}); err != nil {
					t.Fatal(err)
				} else {
					t.Cleanup(func() { _ = s.Close() })
				}
				if got := committedRows(t, s, desc); got != "[]" {
					t.Fatalf("after the failed commit: %s", got)
				}
				if !exists(s.fs, f.Path) {
					t.Fatal("the failed commit removed the log's file")
				}
				stageAndCommit(t, s, desc, f)
				if got, want := committedRows(t, s, desc), loadedRows(1, 30); got != want {
					t.Fatalf("staged again:\n got %s\nwant %s", got, want)
				}
			})
		}
	}
}

// TestDroppedLoadedFileStays: a staged bulk load's file dropped with its
// owner's writes or by recovery commits nothing and is not removed (the
// log names it); dropped with its table it goes with the table's log, and
// it cannot be staged past the drop.
func TestDroppedLoadedFileStays(t *testing.T) {
	ctx := context.Background()
	s := openIngest(t, vfs.NewMem(), 1)
	desc := rowIDDesc(5)
	f := loadFile(t, s, desc, 1, 10)
	drops := []func(){
		func() { s.DiscardActor(9) },
		s.AbortUncommitted,
		func() {
			if err := s.DropTableState(ctx, desc.ID); err != nil {
				t.Fatal(err)
			}
		},
	}
	for i, drop := range drops {
		epoch := s.CommittedEpoch() + 1
		if err := s.StageLoadedFile(epoch, 9, desc.ID, s.TableGens(desc.ID), f); err != nil {
			t.Fatal(err)
		}
		drop()
		if err := s.Commit(ctx, epoch, nil); err != nil {
			t.Fatal(err)
		}
		if got := committedRows(t, s, desc); got != "[]" {
			t.Fatalf("drop %d: a dropped file committed %s", i, got)
		}
		if dropsLog := i == len(drops)-1; exists(s.fs, f.Path) == dropsLog {
			t.Fatalf("drop %d: the file exists: %v", i, !dropsLog)
		}
	}
	stale := TableGens{gen: s.generation.Load(), dropGen: s.mu.dropGen[desc.ID] - 1}
	g := loadFile(t, s, desc, 1, 10)
	if err := s.StageLoadedFile(s.CommittedEpoch()+1, 9, desc.ID, stale, g); err == nil {
		t.Fatal("a file staged for a table dropped since")
	}
	if err := s.StageLoadedFile(s.CommittedEpoch()+1, 9, desc.ID+1, s.TableGens(desc.ID+1), g); err == nil {
		t.Fatal("a file of another table's keys was staged")
	}
}

// TestLoadedFileGoneFromTheLog: a file the log no longer names (truncated,
// swept, dropped) cannot be staged; one removed from the log's directory
// after staging still commits, or after a crash past the commit's intent
// is undone, since staging linked it.
func TestLoadedFileGoneFromTheLog(t *testing.T) {
	ctx := context.Background()
	fs := vfs.NewCrashableMem()
	s, err := Open(ctx, Options{FS: fs, Dir: "db", IngestFrom: 1})
	if err != nil {
		t.Fatal(err)
	}
	desc := rowIDDesc(5)
	gone := loadFile(t, s, desc, 1, 10)
	if err := fs.Remove(gone.Path); err != nil {
		t.Fatal(err)
	}
	if err := s.StageLoadedFile(1, 9, desc.ID, s.TableGens(desc.ID), gone); err == nil {
		t.Fatal("a removed file was staged")
	}
	f := loadFile(t, s, desc, 20, 30)
	if err := s.StageLoadedFile(1, 9, desc.ID, s.TableGens(desc.ID), f); err != nil {
		t.Fatal(err)
	}
	if err := fs.Remove(f.Path); err != nil {
		t.Fatal(err)
	}
	crashed := failCommitAt(t, s, fs, 1, "ingested", true, desc, "")
	s = openIngest(t, crashed, 1)
	if got := committedRows(t, s, desc); got != "[]" {
		t.Fatalf("after the crash: %s", got)
	}
	f = loadFile(t, s, desc, 40, 50)
	epoch := s.CommittedEpoch() + 1
	if err := s.StageLoadedFile(epoch, 9, desc.ID, s.TableGens(desc.ID), f); err != nil {
		t.Fatal(err)
	}
	if err := s.fs.Remove(f.Path); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(ctx, epoch, nil); err != nil {
		t.Fatal(err)
	}
	if got, want := committedRows(t, s, desc), loadedRows(40, 50); got != want {
		t.Fatalf("committed:\n got %s\nwant %s", got, want)
	}
	if names, _ := s.fs.List(s.ingestDir); len(names) != 0 {
		t.Fatalf("the ingest directory holds %v after the commit", names)
	}
}

// TestLoadedRowsReadUntilTheirCommit: two actors splitting a table's
// vnodes add a bulk load's file: each reads by key the rows of its vnodes
// until the epoch commits, a delete in the same epoch wins, nothing of the
// file is written again (the commit ingests it once, by its stager), and
// the row counts include its rows.
func TestLoadedRowsReadUntilTheirCommit(t *testing.T) {
	ctx := context.Background()
	s := openIngest(t, vfs.NewMem(), 1)
	desc := rowIDDesc(5)
	f := loadFile(t, s, desc, 1, 200)
	var halves [2]*StateTable
	for a := range halves {
		halves[a] = mustOpenTable(t, s, desc, ActorID(a+1), alternateVNodes(a))
		if err := halves[a].TrackRowCounts(ctx); err != nil {
			t.Fatal(err)
		}
		if err := halves[a].AddLoaded(f); err != nil {
			t.Fatal(err)
		}
	}
	owner := func(id int64) *StateTable {
		return halves[codec.VNodeOf(codec.HashInt64s([]int64{id}, nil)[0])%2]
	}
	for _, id := range []int64{1, 77, 200} {
		row, ok, err := owner(id).Get(ctx, types.Row{id})
		if err != nil || !ok || row[0] != fmt.Sprint("v", id) {
			t.Fatalf("Get(%d) before the commit: %v %v %v", id, row, ok, err)
		}
	}
	if _, ok, err := owner(201).Get(ctx, types.Row{int64(201)}); ok || err != nil {
		t.Fatalf("Get(201) found a row past the file: %v %v", ok, err)
	}
	if err := owner(77).Delete(types.Row{"v77", int64(77)}); err != nil {
		t.Fatal(err)
	}
	owner(77).CountRows(types.Row{"v77", int64(77)}, -1)
	for _, h := range halves {
		if err := h.Seal(1); err != nil {
			t.Fatal(err)
		}
	}
	stageAndCommit(t, s, desc, f)
	if got, want := committedRows(t, s, desc), loadedRows(1, 200, 77); got != want {
		t.Fatalf("committed:\n got %s\nwant %s", got, want)
	}
	if n, ok, err := s.RowCount(desc.ID); n != 199 || !ok || err != nil {
		t.Fatalf("row count %d %v %v, want 199", n, ok, err)
	}
	for a, h := range halves {
		if h.HoldsFresh() {
			t.Fatalf("actor %d still holds the loaded rows after the commit", a)
		}
	}
	if !exists(s.fs, f.Path) {
		t.Fatal("the actors removed the log's file")
	}
}

// TestFreshRowsBeforeALoadedFileSeal: fresh rows a table got before a
// loaded file in the same epoch are sealed (the loaded chunk, last, is
// born sealed; the seal must look past it).
func TestFreshRowsBeforeALoadedFileSeal(t *testing.T) {
	s := openIngest(t, vfs.NewMem(), 1)
	desc := rowIDDesc(5)
	f := loadFile(t, s, desc, 1, 50)
	tbl := mustOpenTable(t, s, desc, 1, nil)
	insertFreshRange(t, tbl, 100, 121)
	if err := tbl.AddLoaded(f); err != nil {
		t.Fatal(err)
	}
	if err := tbl.Seal(1); err != nil {
		t.Fatal(err)
	}
	stageAndCommit(t, s, desc, f)
	var gap []int64
	for id := int64(51); id < 100; id++ {
		gap = append(gap, id)
	}
	if got, want := committedRows(t, s, desc), loadedRows(1, 120, gap...); got != want {
		t.Fatalf("committed:\n got %s\nwant %s", got, want)
	}
}

// TestLoadedFileOpenedOnce: an actor's loaded file stays readable when the
// log's name for it goes before the commit; its seal stages no file of its
// own; OverlayLen counts the rows of its vnodes only; another table's file
// and a missing one are refused.
func TestLoadedFileOpenedOnce(t *testing.T) {
	ctx := context.Background()
	s := openIngest(t, vfs.NewMem(), 1)
	desc := rowIDDesc(5)
	f := loadFile(t, s, desc, 1, 100)
	tbl := mustOpenTable(t, s, desc, 1, alternateVNodes(0))
	if err := tbl.AddLoaded(f); err != nil {
		t.Fatal(err)
	}
	var mine []int64
	for id := int64(1); id <= 100; id++ {
		if codec.VNodeOf(codec.HashInt64s([]int64{id}, nil)[0])%2 == 0 {
			mine = append(mine, id)
		}
	}
	if n := tbl.OverlayLen(); n != len(mine) {
		t.Fatalf("OverlayLen %d, want the %d rows of the table's vnodes", n, len(mine))
	}
	if err := s.StageLoadedFile(1, 9, desc.ID, s.TableGens(desc.ID), f); err != nil {
		t.Fatal(err)
	}
	if err := s.fs.Remove(f.Path); err != nil {
		t.Fatal(err)
	}
	for _, id := range mine {
		if _, ok, err := tbl.Get(ctx, types.Row{id}); !ok || err != nil {
			t.Fatalf("Get(%d) after the log's file went: %v %v", id, ok, err)
		}
	}
	if err := tbl.Delete(types.Row{fmt.Sprint("v", mine[0]), mine[0]}); err != nil {
		t.Fatal(err)
	}
	if err := tbl.Seal(1); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	for _, sb := range s.mu.staged[1] {
		if sb.owner == 1 && len(sb.files) != 0 {
			t.Errorf("the actor's seal staged files %v", sb.files)
		}
	}
	s.mu.Unlock()
	if err := s.Commit(ctx, 1, nil); err != nil {
		t.Fatal(err)
	}
	if got, want := committedRows(t, s, desc), loadedRows(1, 100, mine[0]); got != want {
		t.Fatalf("committed:\n got %s\nwant %s", got, want)
	}
	other := mustOpenTable(t, s, rowIDDesc(6), 2, nil)
	g := loadFile(t, s, desc, 200, 210)
	if err := other.AddLoaded(g); err == nil {
		t.Fatal("a table took another table's file")
	}
	if err := s.fs.Remove(g.Path); err != nil {
		t.Fatal(err)
	}
	if err := tbl.AddLoaded(g); err == nil {
		t.Fatal("a table took a missing file")
	}
}
