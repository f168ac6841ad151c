package storage

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
	"pgregory.net/rapid"

	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// openIngest opens a store on fs whose seals put every fresh row into a
// file (ingestFrom 1) or none (-1).
func openIngest(t testing.TB, fs vfs.FS, ingestFrom int) *Store {
	t.Helper()
	s, err := Open(context.Background(), Options{FS: fs, Dir: "db", IngestFrom: ingestFrom})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// freshOp is one step of TestIngestedSealsMatchBatchSeals.
type freshOp struct {
	ids []int64 // a fresh chunk's row ids (rising)
	// encoded: the first store takes the ids already encoded
	// (InsertFreshEncoded), the other as a chunk.
	encoded bool
	del     int64 // else: delete this id (0: none)
	upd     int64 // else: overwrite this id
	// else: overwrite these ids, as fresh rows (OverwriteFresh) where
	// fresh is set and the table holds no other write, else one by one
	rewrite []int64
	fresh   bool
	seal    bool // then seal the next epoch
	commit  bool // then commit every sealed epoch
}

// freshShape is a table TestIngestedSealsMatchBatchSeals writes, whose
// rows it makes from ids: keyed by the id (a bulk load's row ids), or by
// a key made from it, in the id's order or against it.
type freshShape struct {
	desc TableDesc
	row  func(v types.Datum, id int64) types.Row
	ids  bool // keyed by the id itself: InsertFreshEncoded takes its rows
}

var freshShapes = []freshShape{
	{desc: rowIDDesc(3), ids: true,
		row: func(v types.Datum, id int64) types.Row { return types.Row{v, id} }},
	{desc: TableDesc{ID: 3, Types: []types.Type{types.TVarchar, types.TVarchar}, PK: []int{1}, DistKey: []int{1},
		Orders: []codec.Order{{Desc: true}}},
		row: func(v types.Datum, id int64) types.Row { return types.Row{v, fmt.Sprintf("k%04d", id)} }},
	{desc: TableDesc{ID: 3, Types: []types.Type{types.TVarchar, types.TInt32, types.TVarchar}, PK: []int{1, 2}, DistKey: []int{1}},
		row: func(v types.Datum, id int64) types.Row { return types.Row{v, id / 7, fmt.Sprint(id % 7)} }},
}

// TestIngestedSealsMatchBatchSeals runs the same fresh inserts, deletes
// and overwrites against a store that seals fresh rows into ingested
// files, spilling the oldest of them (at least a drawn size) to files
// before the seal past a drawn size, and
// one that puts them in batches (the first taking some inserts already
// encoded, the second always as chunks): both read the same rows at every step,
// and after each commit both hold the same rows. Chunks of different steps interleave their ids (two
// statements' chunks in one epoch), and deletes and overwrites of fresh
// rows in the same epoch must win over them. The table is keyed by a row
// id, by text in descending order, or by an int and text.
func TestIngestedSealsMatchBatchSeals(t *testing.T) {
	defer func(n, m, p int) { rawMarkEvery, sealSpillFrom, presealFrom = n, m, p }(rawMarkEvery, sealSpillFrom, presealFrom)
	rapid.Check(t, func(rt *rapid.T) {
		ctx := context.Background()
		stores := []*Store{openIngest(t, vfs.NewMem(), 1), openIngest(t, vfs.NewMem(), -1)}
		// The seal spills the rows left in memory past so many bytes.
		sealSpillFrom = rapid.SampledFrom([]int{1, 50, 1 << 20}).Draw(rt, "sealSpillFrom")
		// Spill the fresh rows of the first store after so many bytes,
		// marking every record of a spill, or few of them.
		stores[0].spillFrom = rapid.SampledFrom([]int{0, 1, 30, 60, 150}).Draw(rt, "spillFrom")
		// and spill the oldest rows, at least so many bytes, or all.
		stores[0].spillAtLeast = rapid.SampledFrom([]int{1, 20, 70, defaultSpillAtLeast}).Draw(rt, "spillAtLeast")
		rawMarkEvery = rapid.SampledFrom([]int{1, 2, 3, 64}).Draw(rt, "rawMarkEvery")
		// Every epoch is late, its rows written to files as they come
		// (and merged) past so many bytes, or none is.
		stores[0].presealAfter = rapid.SampledFrom([]time.Duration{-1, time.Nanosecond}).Draw(rt, "presealAfter")
		presealFrom = rapid.SampledFrom([]int{1, 100, 1 << 20}).Draw(rt, "presealFrom")
		shape := freshShapes[rapid.IntRange(0, len(freshShapes)-1).Draw(rt, "shape")]
		tbls := []*StateTable{mustOpenTable(t, stores[0], shape.desc, 1, nil), mustOpenTable(t, stores[1], shape.desc, 1, nil)}
		used := map[int64]bool{}
		var epoch uint64
		steps := rapid.IntRange(1, 20).Draw(rt, "steps")
		for range steps {
			op := drawFreshOp(rt, used, shape.ids)
			for i, tbl := range tbls {
				op := op
				op.encoded = op.encoded && i == 0
				op.fresh = i == 0 && tbl.HoldsNoWrites()
				if err := applyFreshOp(ctx, stores[i], tbl, shape, op, epoch); err != nil {
					rt.Fatal(err)
				}
			}
			if op.seal {
				epoch++
			}
			for id := range int64(241) {
				pk := tbls[0].PKOf(shape.row(nil, id))
				a, aok, aerr := tbls[0].Get(ctx, pk)
				b, bok, berr := tbls[1].Get(ctx, pk)
				if aerr != nil || berr != nil || aok != bok || fmt.Sprint(a) != fmt.Sprint(b) {
					rt.Fatalf("get %d: %v %v %v, batch store %v %v %v", id, a, aok, aerr, b, bok, berr)
				}
			}
			if op.commit {
				want := committedRows(rt, stores[1], shape.desc)
				if got := committedRows(rt, stores[0], shape.desc); got != want {
					rt.Fatalf("epoch %d: ingested store holds\n%s\nbatch store holds\n%s", epoch, got, want)
				}
			}
		}
	})
}

// drawFreshOp draws a step; ids says the rows are keyed by their ids
// (else a chunk's ids may come in any order, and none encoded).
func drawFreshOp(rt *rapid.T, used map[int64]bool, ids bool) freshOp {
	op := freshOp{seal: rapid.Bool().Draw(rt, "seal")}
	op.commit = op.seal && rapid.Bool().Draw(rt, "commit")
	switch rapid.IntRange(0, 4).Draw(rt, "kind") {
	case 0, 1:
		op.encoded = ids && rapid.Bool().Draw(rt, "encoded")
		lo := rapid.Int64Range(1, 200).Draw(rt, "lo")
		for id := lo; id < lo+rapid.Int64Range(1, 40).Draw(rt, "n"); id++ {
			if !used[id] {
				used[id] = true
				op.ids = append(op.ids, id)
			}
		}
		if !ids && rapid.Bool().Draw(rt, "shuffled") {
			op.ids = rapid.Permutation(op.ids).Draw(rt, "ids")
		}
	case 2:
		op.del = drawUsed(rt, used, "del")
	case 3:
		op.upd = drawUsed(rt, used, "upd")
	default:
		if len(used) > 0 {
			ids := slices.Sorted(maps.Keys(used))
			op.rewrite = rapid.SliceOfNDistinct(rapid.SampledFrom(ids), 1, 30, rapid.ID[int64]).Draw(rt, "rewrite")
		}
	}
	return op
}

// drawUsed draws an id inserted before, or 0 when there is none: a fresh
// id is one never written, so only rows already inserted are deleted or
// overwritten.
func drawUsed(rt *rapid.T, used map[int64]bool, label string) int64 {
	if len(used) == 0 {
		return 0
	}
	ids := slices.Sorted(maps.Keys(used))
	return rapid.SampledFrom(ids).Draw(rt, label)
}

// encodeFreshRows encodes the rows applyFreshOp inserts for ids, with a
// byte between rows as in a DML payload.
func encodeFreshRows(ids []int64) EncodedRows {
	var e EncodedRows
	for _, id := range ids {
		e.Buf = append(e.Buf, 0xee)
		start := len(e.Buf)
		var err error
		e.Buf, err = codec.EncodeValue(e.Buf, types.Row{fmt.Sprint("v", id), id}, []types.Type{types.TVarchar, types.TInt64})
		if err != nil {
			panic(err)
		}
		e.Spans = append(e.Spans, uint32(start), uint32(len(e.Buf)))
	}
	return e
}

func applyFreshOp(ctx context.Context, s *Store, tbl *StateTable, shape freshShape, op freshOp, epoch uint64) error {
	switch {
	case len(op.ids) > 0 && op.encoded:
		if ok, err := tbl.InsertFreshEncoded(op.ids, 1, encodeFreshRows(op.ids)); !ok || err != nil {
			return fmt.Errorf("InsertFreshEncoded: %v %v", ok, err)
		}
	case len(op.ids) > 0:
		b := types.NewBuilder(tbl.Desc().Types, len(op.ids)+1) // +1: Append hands out a full chunk
		for _, id := range op.ids {
			b.Append(types.Insert, shape.row(fmt.Sprint("v", id), id))
		}
		c := b.Take()
		rows := make([]int, len(op.ids))
		for i := range rows {
			rows[i] = i
		}
		if ok, err := tbl.InsertFresh(c, rows); !ok || err != nil {
			return fmt.Errorf("InsertFresh: %v %v", ok, err)
		}
	case op.del != 0:
		if err := tbl.Delete(shape.row(nil, op.del)); err != nil {
			return err
		}
	case op.upd != 0:
		if err := tbl.Insert(shape.row("updated", op.upd)); err != nil {
			return err
		}
	case len(op.rewrite) > 0:
		if err := rewriteFresh(tbl, shape, op); err != nil {
			return err
		}
	}
	if op.seal {
		if err := tbl.Seal(epoch + 1); err != nil {
			return err
		}
	}
	if op.commit && epoch+1 > s.CommittedEpoch() {
		return s.Commit(ctx, epoch+1, nil)
	}
	return nil
}

// committedRows renders a table's committed rows in order.
func committedRows(t interface{ Fatal(...any) }, s *Store, desc TableDesc) string {
	snap, err := s.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	rows, err := snapshotRows(snap, desc)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(rows)
}

// snapshotRows returns a table's rows in snap in order.
func snapshotRows(snap *Snapshot, desc TableDesc) ([]types.Row, error) {
	it, err := snap.ScanTable(context.Background(), desc)
	if err != nil {
		return nil, err
	}
	rows, err := collect(context.Background(), it, 0)
	slices.SortFunc(rows, types.CompareRows)
	return rows, err
}

// TestBulkSealIsIngested: a seal of many fresh rows reaches Pebble by
// ingestion, not through the WAL, and leaves no file behind.
func TestBulkSealIsIngested(t *testing.T) {
	ctx := context.Background()
	fs := vfs.NewMem()
	s := openIngest(t, fs, 0)
	tbl := mustOpenTable(t, s, rowIDDesc(4), 1, nil)
	insertFreshRange(t, tbl, 1, 200_000)
	if err := tbl.Seal(1); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(ctx, 1, nil); err != nil {
		t.Fatal(err)
	}
	if n := s.db.Metrics().Ingest.Count; n == 0 {
		t.Fatal("a 200 000-row seal was not ingested")
	}
	if names, _ := fs.List(s.ingestDir); len(names) != 0 {
		t.Fatalf("files left after the commit: %v", names)
	}
	if r, ok, err := tbl.Get(ctx, types.Row{int64(777)}); err != nil || !ok || r[0] != "v777" {
		t.Fatalf("row 777 = %v %v %v", r, ok, err)
	}
	checkScanTables(t, s, 199_999)
}

// checkScanTables checks that the store has one sstable of at least rows
// entries and that it is written for scans (scanWriterOptions): no bloom
// filter, and data blocks of about 32 KiB.
func checkScanTables(t *testing.T, s *Store, rows uint64) {
	t.Helper()
	for _, p := range bigTables(t, s, rows) {
		if p.FilterPolicyName != "" {
			t.Errorf("sealed rows have a %s filter", p.FilterPolicyName)
		}
		if avg := p.DataSize / max(p.NumDataBlocks, 1); avg < scanBlockSize/2 {
			t.Errorf("sealed rows' data blocks average %d bytes, want about %d", avg, scanBlockSize)
		}
	}
}

// bigTables returns the properties of the store's one sstable of at least
// rows entries, failing unless there is exactly one.
func bigTables(t *testing.T, s *Store, rows uint64) []*sstable.Properties {
	t.Helper()
	levels, err := s.db.SSTables(pebble.WithProperties())
	if err != nil {
		t.Fatal(err)
	}
	var big []*sstable.Properties
	for _, level := range levels {
		for _, f := range level {
			if f.Properties.NumEntries >= rows {
				big = append(big, f.Properties)
			}
		}
	}
	if len(big) != 1 {
		t.Fatalf("%d sstables of at least %d rows, want 1", len(big), rows)
	}
	return big
}

// insertFreshRange inserts rows lo..hi-1 as one fresh chunk.
func insertFreshRange(t testing.TB, tbl *StateTable, lo, hi int64) {
	t.Helper()
	b := types.NewBuilder(tbl.Desc().Types, int(hi-lo)+1)
	rows := make([]int, 0, hi-lo)
	for id := lo; id < hi; id++ {
		b.Append(types.Insert, types.Row{fmt.Sprint("v", id), id})
		rows = append(rows, len(rows))
	}
	if ok, err := tbl.InsertFresh(b.Take(), rows); !ok || err != nil {
		t.Fatalf("InsertFresh: %v %v", ok, err)
	}
}

// TestCrashDuringIngestKeepsCommittedEpoch stops a commit with files at
// each step, as a crash would, loses what was not synced, and reopens:
// the store holds exactly the last committed epoch and no file, and the
// lost epoch can be committed again. A commit that fails at a step
// without a crash leaves the store as it was. With late epochs, the lost
// epoch's rows are in several files written as they came (preseal.go).
func TestCrashDuringIngestKeepsCommittedEpoch(t *testing.T) {
	for _, step := range []string{"intent", "ingested"} {
		for _, crash := range []bool{false, true} {
			for _, late := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/crash=%v/late=%v", step, crash, late), func(t *testing.T) {
					testCrashDuringIngest(t, step, crash, late)
				})
			}
		}
	}
}

func testCrashDuringIngest(t *testing.T, step string, crash, late bool) {
	ctx := context.Background()
	fs := vfs.NewCrashableMem()
	opts := Options{FS: fs, Dir: "db", IngestFrom: 1, PresealAfter: -1}
	if late {
		withPresealFrom(t, 1)
		opts.PresealAfter = time.Nanosecond
	}
	s, err := Open(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	desc := rowIDDesc(5)
	tbl := mustOpenTable(t, s, desc, 1, nil)
	insertFreshRange(t, tbl, 1, 50)
	if err := tbl.Seal(1); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(ctx, 1, nil); err != nil {
		t.Fatal(err)
	}
	want := committedRows(t, s, desc)
	for lo := int64(50); lo < 90; lo += 8 {
		insertFreshRange(t, tbl, lo, lo+8)
	}
	if late && (tbl.pre == nil || len(tbl.pre.files) < 2) {
		t.Fatalf("late epoch wrote %v, want several files", tbl.pre)
	}
	if err := tbl.Seal(2); err != nil {
		t.Fatal(err)
	}
	crashed := failCommitAt(t, s, fs, 2, step, crash, desc, want)
	if crashed == nil {
		return
	}
	s2 := openIngest(t, crashed, 1)
	if e := s2.CommittedEpoch(); e != 1 {
		t.Fatalf("committed epoch after the crash = %d, want 1", e)
	}
	if got := committedRows(t, s2, desc); got != want {
		t.Fatalf("after the crash:\n got %s\nwant %s", got, want)
	}
	if names, _ := crashed.List(s2.ingestDir); len(names) != 0 {
		t.Fatalf("files left after recovery: %v", names)
	}
	tbl2 := mustOpenTable(t, s2, desc, 1, nil)
	insertFreshRange(t, tbl2, 50, 90)
	if err := tbl2.Seal(2); err != nil {
		t.Fatal(err)
	}
	if err := s2.Commit(ctx, 2, nil); err != nil {
		t.Fatal(err)
	}
	snap, err := s2.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	if rows, err := snapshotRows(snap, desc); err != nil || len(rows) != 89 {
		t.Fatalf("after committing epoch 2 again: %d rows (%v), want 89", len(rows), err)
	}
}

// TestSnapshotWaitsForIngestingCommit: a snapshot taken while a commit has
// ingested its files but not yet written its batch would see the rows
// under the previous epoch's label; it waits for the commit instead.
func TestSnapshotWaitsForIngestingCommit(t *testing.T) {
	ctx := context.Background()
	s := openIngest(t, vfs.NewMem(), 1)
	desc := rowIDDesc(6)
	tbl := mustOpenTable(t, s, desc, 1, nil)
	insertFreshRange(t, tbl, 1, 10)
	if err := tbl.Seal(1); err != nil {
		t.Fatal(err)
	}
	type seen struct {
		epoch uint64
		rows  int
	}
	got := make(chan seen, 1)
	reading := false
	s.crashAt = func(at string) error {
		if at != "ingested" {
			return nil
		}
		reading = true
		go func() {
			snap, err := s.Snapshot()
			if err != nil {
				got <- seen{}
				return
			}
			defer snap.Close()
			rows, err := snapshotRows(snap, desc)
			if err != nil {
				rows = nil
			}
			got <- seen{snap.Epoch(), len(rows)}
		}()
		// Give the reader every chance to run inside the window.
		time.Sleep(20 * time.Millisecond)
		return nil
	}
	if err := s.Commit(ctx, 1, nil); err != nil {
		t.Fatal(err)
	}
	if !reading {
		t.Fatal("the commit did not stop between its ingest and its batch")
	}
	if g := <-got; g.epoch != 1 || g.rows != 9 {
		t.Fatalf("a snapshot during the commit saw epoch %d with %d rows, want epoch 1 with 9", g.epoch, g.rows)
	}
}

// TestIngestedSealsMatchBatchSealsStaged is the same comparison with a
// stage of 64 bytes, so a sealed file's rows are staged a few vnodes at a
// time, and with staging off.
func TestIngestedSealsMatchBatchSealsStaged(t *testing.T) {
	defer func(n int) { stageBytes = n }(stageBytes)
	stageBytes = 64
	t.Run("small stage", TestIngestedSealsMatchBatchSeals)
	stageOff = true
	defer func() { stageOff = false }()
	t.Run("no stage", TestIngestedSealsMatchBatchSeals)
}

// TestKeyedBulkSealKeepsFilters: the sealed fresh rows of a table read by
// key (ReadByKey: a table with a primary key) keep bloom filters, which
// every INSERT's key check reads.
func TestKeyedBulkSealKeepsFilters(t *testing.T) {
	ctx := context.Background()
	s := openIngest(t, vfs.NewMem(), 0)
	tbl := mustOpenTable(t, s, rowIDDesc(4), 1, nil)
	tbl.ReadByKey()
	insertFreshRange(t, tbl, 1, 200_000)
	if err := tbl.Seal(1); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(ctx, 1, nil); err != nil {
		t.Fatal(err)
	}
	if p := bigTables(t, s, 199_999)[0]; p.FilterPolicyName == "" {
		t.Error("the sealed rows of a table read by key have no filter")
	}
}

// rewriteFresh gives op.rewrite's rows new values: as one fresh chunk of
// overwrites when op.fresh, else one by one into the overlay.
func rewriteFresh(tbl *StateTable, shape freshShape, op freshOp) error {
	b := types.NewBuilder(tbl.Desc().Types, len(op.rewrite)+1)
	for _, id := range op.rewrite {
		b.Append(types.UpdateInsert, shape.row(fmt.Sprint("re", id), id))
	}
	c := b.Take()
	if !op.fresh {
		for i := range c.Capacity() {
			if err := tbl.Insert(c.Row(i)); err != nil {
				return err
			}
		}
		return nil
	}
	rows := make([]int, len(op.rewrite))
	for i := range rows {
		rows[i] = i
	}
	if ok, err := tbl.OverwriteFresh(c, rows); !ok || err != nil {
		return fmt.Errorf("OverwriteFresh: %v %v", ok, err)
	}
	return nil
}

// TestFailedCommitKeepsOverwrittenRows: a commit that fails or crashes
// after ingesting its files undoes them by deleting their keys; rows an
// UPDATE overwrote (OverwriteFresh, past the size that seals to a file)
// are not in a file, so the rows they overwrote stay.
func TestFailedCommitKeepsOverwrittenRows(t *testing.T) {
	for _, crash := range []bool{false, true} {
		t.Run(fmt.Sprintf("crash=%v", crash), func(t *testing.T) {
			ctx := context.Background()
			fs := vfs.NewCrashableMem()
			s, err := Open(ctx, Options{FS: fs, Dir: "db", IngestFrom: 1})
			if err != nil {
				t.Fatal(err)
			}
			desc, other := rowIDDesc(5), rowIDDesc(6)
			tbl, tbl2 := mustOpenTable(t, s, desc, 1, nil), mustOpenTable(t, s, other, 2, nil)
			insertFreshRange(t, tbl, 1, 50)
			if err := tbl.Seal(1); err != nil {
				t.Fatal(err)
			}
			if err := s.Commit(ctx, 1, nil); err != nil {
				t.Fatal(err)
			}
			want := committedRows(t, s, desc)
			b := types.NewBuilder(desc.Types, 64)
			var rows []int
			for id := int64(49); id >= 1; id-- {
				b.Append(types.UpdateInsert, types.Row{"overwritten", id})
				rows = append(rows, len(rows))
			}
			if ok, err := tbl.OverwriteFresh(b.Take(), rows); !ok || err != nil {
				t.Fatalf("OverwriteFresh: %v %v", ok, err)
			}
			insertFreshRange(t, tbl2, 1, 50) // a file for the commit to undo
			for _, x := range []*StateTable{tbl, tbl2} {
				if err := x.Seal(2); err != nil {
					t.Fatal(err)
				}
			}
			crashed := failCommitAt(t, s, fs, 2, "ingested", crash, desc, want)
			if crashed == nil {
				return
			}
			if got := committedRows(t, openIngest(t, crashed, 1), desc); got != want {
				t.Fatalf("after the crash:\n got %s\nwant %s", got, want)
			}
		})
	}
}

// failCommitAt makes s's commit of epoch fail at step, by an error or
// (crash) a simulated crash. After an error it checks that desc's
// committed rows are still want, closes s and returns nil; after a crash
// it closes s and returns a crash clone of fs to reopen.
func failCommitAt(t *testing.T, s *Store, fs *vfs.MemFS, epoch uint64, step string, crash bool, desc TableDesc, want string) *vfs.MemFS {
	t.Helper()
	s.crashAt = func(at string) error {
		switch {
		case at != step:
			return nil
		case crash:
			return errSimulatedCrash
		}
		return fmt.Errorf("failure at %s", at)
	}
	if err := s.Commit(context.Background(), epoch, nil); err == nil {
		t.Fatal("the commit went through its crash point")
	}
	s.crashAt = nil
	if !crash {
		if got := committedRows(t, s, desc); got != want {
			t.Fatalf("after the failed commit:\n got %s\nwant %s", got, want)
		}
		_ = s.Close()
		return nil
	}
	crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0, RNG: rand.New(rand.NewPCG(1, 2))})
	_ = s.Close()
	return crashed
}
