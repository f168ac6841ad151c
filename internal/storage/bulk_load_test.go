package storage

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"pgregory.net/rapid"

	"github.com/sluice-db/sluice/internal/storage/storagetest"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// TestBulkLoadWritesWhatActorsSeal: a bulk load's file holds, in order,
// exactly the keys and values two actors splitting the same rows by vnode
// seal and commit, whatever the pieces and however often the rows spill;
// its counts are the rows of each vnode, and no spill or memory is left.
func TestBulkLoadWritesWhatActorsSeal(t *testing.T) {
	defer func(n int) { sealSpillFrom = n }(sealSpillFrom)
	rapid.Check(t, func(rt *rapid.T) {
		sealSpillFrom = rapid.SampledFrom([]int{1, 50, 1 << 20}).Draw(rt, "sealSpillFrom")
		fs := vfs.NewMem()
		s := openIngest(t, fs, 1)
		s.spillFrom = rapid.SampledFrom([]int{1, 500, 5000, 1 << 40}).Draw(rt, "spillFrom")
		s.spillAtLeast = rapid.SampledFrom([]int{1, 200, 4000}).Draw(rt, "spillAtLeast")
		pieces := drawPieces(rt)

		load, err := s.NewBulkLoad(rowIDDesc(7))
		if err != nil {
			rt.Fatal(err)
		}
		// A caller may reuse its ids and spans for the next piece (not the
		// rows' bytes): the load copies them.
		reuse := rapid.Bool().Draw(rt, "reuse ids and spans")
		var idBuf []int64
		var spanBuf []uint32
		for _, ids := range pieces {
			rows := encodeFreshRows(ids)
			if reuse {
				idBuf, spanBuf = append(idBuf[:0], ids...), append(spanBuf[:0], rows.Spans...)
				ids, rows.Spans = idBuf, spanBuf
			}
			if err := load.Add(ids, rows); err != nil {
				rt.Fatal(err)
			}
		}
		got, err := load.Finish("db/load.sst")
		if err != nil {
			rt.Fatal(err)
		}
		if n := s.freshMem.total(); n != 0 {
			rt.Fatalf("%d fresh bytes still held after the load", n)
		}
		if spills := listSpills(s); len(spills) != 0 {
			rt.Fatalf("spills left after the load: %v", spills)
		}
		file := readSSTFile(rt, s, got.Path)
		want := actorsSeal(rt, s, pieces)
		if len(file) != len(want) {
			rt.Fatalf("bulk load file holds %d rows, the actors sealed %d", len(file), len(want))
		}
		for i := range want {
			if !bytes.Equal(file[i][0], want[i][0]) || !bytes.Equal(file[i][1], want[i][1]) {
				rt.Fatalf("row %d: file has %x=%x, actors sealed %x=%x", i, file[i][0], file[i][1], want[i][0], want[i][1])
			}
		}
		checkLoaded(rt, got, pieces, file)
	})
}

// drawPieces draws rising row ids cut into pieces.
func drawPieces(rt *rapid.T) [][]int64 {
	next := rapid.Int64Range(1, 1<<40).Draw(rt, "first id")
	var pieces [][]int64
	for range rapid.IntRange(1, 8).Draw(rt, "pieces") {
		ids := make([]int64, rapid.IntRange(1, 700).Draw(rt, "rows"))
		for k := range ids {
			next += rapid.Int64Range(1, 3).Draw(rt, "gap")
			ids[k] = next
		}
		pieces = append(pieces, ids)
	}
	return pieces
}

// actorsSeal loads pieces as a table's two actors would (each its half
// of the vnodes), seals and commits them, and returns the table's rows.
func actorsSeal(rt *rapid.T, s *Store, pieces [][]int64) [][2][]byte {
	desc := rowIDDesc(8)
	var halves [2]*StateTable
	for a := range halves {
		h, err := s.OpenTable(desc, ActorID(a+1), alternateVNodes(a))
		if err != nil {
			rt.Fatal(err)
		}
		halves[a] = h
	}
	for _, ids := range pieces {
		var part [2][]int64
		for _, id := range ids {
			v := codec.VNodeOf(codec.HashInt64s([]int64{id}, nil)[0])
			part[v%2] = append(part[v%2], id)
		}
		for a, p := range part {
			if len(p) == 0 {
				continue
			}
			if ok, err := halves[a].InsertFreshEncoded(p, 1, encodeFreshRows(p)); !ok || err != nil {
				rt.Fatalf("InsertFreshEncoded: %v %v", ok, err)
			}
		}
	}
	epoch := s.CommittedEpoch() + 1
	for _, h := range halves {
		if err := h.Seal(epoch); err != nil {
			rt.Fatal(err)
		}
	}
	if err := s.Commit(context.Background(), epoch, nil); err != nil {
		rt.Fatal(err)
	}
	p := tablePrefix(desc.ID)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: prefixEnd(p)})
	if err != nil {
		rt.Fatal(err)
	}
	defer it.Close()
	var out [][2][]byte
	for ok := it.First(); ok; ok = it.Next() {
		// The file is table 7's: compare the keys past the table id.
		k := slices.Clone(it.Key())
		out = append(out, [2][]byte{retable(k, 7), slices.Clone(it.Value())})
	}
	return out
}

// retable rewrites the table id of a state key t|id|….
func retable(k []byte, id uint32) []byte {
	return append(slices.Clone(tablePrefix(id)), k[len(tablePrefix(id)):]...)
}

// readSSTFile returns a file's keys and values in order.
func readSSTFile(rt *rapid.T, s *Store, path string) [][2][]byte {
	r, err := s.openSST(path)
	if err != nil {
		rt.Fatal(err)
	}
	defer r.Close()
	it, err := r.NewIter(sstable.NoTransforms, nil, nil, sstable.AssertNoBlobHandles)
	if err != nil {
		rt.Fatal(err)
	}
	defer it.Close()
	var out [][2][]byte
	for kv := it.First(); kv != nil; kv = it.Next() {
		v, _, err := kv.Value(nil)
		if err != nil {
			rt.Fatal(err)
		}
		out = append(out, [2][]byte{slices.Clone(kv.K.UserKey), slices.Clone(v)})
	}
	return out
}

// checkLoaded checks a finished load's description against its rows.
func checkLoaded(rt *rapid.T, got *LoadedFile, pieces [][]int64, file [][2][]byte) {
	all := slices.Concat(pieces...)
	counts := make([]int64, codec.VNodeCount)
	for _, v := range codec.HashInt64s(all, nil) {
		counts[codec.VNodeOf(v)]++
	}
	switch {
	case got.Rows != int64(len(all)) || got.LoID != all[0] || got.HiID != all[len(all)-1]:
		rt.Fatalf("loaded %d rows, ids %d..%d; want %d, %d..%d", got.Rows, got.LoID, got.HiID, len(all), all[0], all[len(all)-1])
	case !slices.Equal(got.Counts, counts):
		rt.Fatalf("counts %v, want %v", got.Counts, counts)
	case !bytes.Equal(got.LoKey, file[0][0]) || !bytes.Equal(got.HiKey, file[len(file)-1][0]):
		rt.Fatalf("key range %x..%x, file %x..%x", got.LoKey, got.HiKey, file[0][0], file[len(file)-1][0])
	}
}

// listSpills returns the spill files in the store's ingest directory that
// are not back in its pool of files to write over.
func listSpills(s *Store) []string {
	names, err := s.fs.List(s.ingestDir)
	if err != nil {
		return nil // never made: nothing spilled
	}
	s.spills.mu.Lock()
	defer s.spills.mu.Unlock()
	var out []string
	for _, n := range names {
		pooled := slices.ContainsFunc(s.spills.files, func(f pooledSpill) bool { return s.fs.PathBase(f.path) == n })
		if strings.HasSuffix(n, ".spill") && !pooled {
			out = append(out, n)
		}
	}
	return out
}

// TestBulkLoadRefuses: ids that do not rise across pieces or within one
// end the load (Abort removes its spills), as do a load of no rows and
// tables not keyed by one ascending bigint; use after the end fails.
func TestBulkLoadRefuses(t *testing.T) {
	s := openIngest(t, vfs.NewMem(), 1)
	s.spillFrom, s.spillAtLeast = 1, 1 // every piece spills as it comes
	for _, bad := range [][]int64{{9, 10}, {12, 11}} {
		load, err := s.NewBulkLoad(rowIDDesc(7))
		if err != nil {
			t.Fatal(err)
		}
		ids := []int64{5, 6, 9}
		if err := load.Add(ids, encodeFreshRows(ids)); err != nil {
			t.Fatal(err)
		}
		if len(load.t.unsealedFresh()) != 1 || load.t.fresh[0].spill == nil {
			t.Fatal("no spill with a budget of one byte")
		}
		if err := load.Add(bad, encodeFreshRows(bad)); err == nil {
			t.Fatalf("a piece %v after ids up to 9 was taken", bad)
		}
		if spills := listSpills(s); len(spills) != 0 {
			t.Fatalf("spills left after a refused piece: %v", spills)
		}
		if _, err := load.Finish("db/x.sst"); err == nil {
			t.Fatal("Finish after a refused piece")
		}
	}
	empty, err := s.NewBulkLoad(rowIDDesc(8))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := empty.Finish("db/y.sst"); err == nil {
		t.Fatal("a load of no rows finished")
	}
	keyed := TableDesc{ID: 9, Types: rowIDDesc(9).Types, PK: []int{0}, DistKey: []int{0}}
	if _, err := s.NewBulkLoad(keyed); err == nil {
		t.Fatal("a bulk load of a table keyed by a varchar")
	}
	desc := rowIDDesc(10)
	desc.Orders = []codec.Order{{Desc: true}}
	if _, err := s.NewBulkLoad(desc); err == nil {
		t.Fatal("a bulk load of a table keyed by a descending bigint")
	}
	if n := s.freshMem.total(); n != 0 {
		t.Fatalf("%d fresh bytes still held", n)
	}
}

// TestBulkLoadEndsOnAFailedSpill: a piece whose spill fails ends the load
// (its rows were kept before the spill, so the load's counts could no
// longer be its rows): later calls fail, and no memory or spill is left.
func TestBulkLoadEndsOnAFailedSpill(t *testing.T) {
	faults := &storagetest.FailingFiles{Suffix: ".spill"}
	s, err := Open(context.Background(), Options{FS: errorfs.Wrap(vfs.NewMem(), faults), Dir: "db", IngestFrom: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	s.spillFrom, s.spillAtLeast = 1, 1 // every piece spills as it comes
	load, err := s.NewBulkLoad(rowIDDesc(7))
	if err != nil {
		t.Fatal(err)
	}
	if err := load.Add([]int64{1, 2, 3}, encodeFreshRows([]int64{1, 2, 3})); err != nil {
		t.Fatal(err)
	}
	faults.On.Store(true)
	if err := load.Add([]int64{4, 5, 6}, encodeFreshRows([]int64{4, 5, 6})); !errors.Is(err, errorfs.ErrInjected) {
		t.Fatalf("Add with its spill failing: %v", err)
	}
	faults.On.Store(false)
	if err := load.Add([]int64{7}, encodeFreshRows([]int64{7})); err == nil {
		t.Fatal("Add after a failed Add")
	}
	if _, err := load.Finish("db/load.sst"); err == nil {
		t.Fatal("Finish after a failed Add")
	}
	if n := s.freshMem.total(); n != 0 {
		t.Fatalf("%d fresh bytes still held", n)
	}
	if spills := listSpills(s); len(spills) != 0 {
		t.Fatalf("spills left: %v", spills)
	}
}

// TestBulkLoadFinishRefusesAnExistingFile: Finish never writes over a file.
func TestBulkLoadFinishRefusesAnExistingFile(t *testing.T) {
	s := openIngest(t, vfs.NewMem(), 1)
	f, err := s.fs.Create("db/taken.sst", "")
	if err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	load, err := s.NewBulkLoad(rowIDDesc(7))
	if err != nil {
		t.Fatal(err)
	}
	if err := load.Add([]int64{1}, encodeFreshRows([]int64{1})); err != nil {
		t.Fatal(err)
	}
	if _, err := load.Finish("db/taken.sst"); err == nil {
		t.Fatal("Finish wrote over an existing file")
	}
	if _, err := s.fs.Stat("db/taken.sst"); err != nil {
		t.Fatalf("the existing file is gone: %v", err)
	}
}

// TestBulkLoadFinishFailingAfterItsFile: a Finish whose file is written
// but whose directory cannot be synced removes the file and ends the load
// without closing its spills a second time (a raw spill's file went back
// to the store's pool once: twice, two later spills would write over
// each other).
func TestBulkLoadFinishFailingAfterItsFile(t *testing.T) {
	faults := &storagetest.FailingFiles{Suffix: "loads"}
	s, err := Open(context.Background(), Options{FS: errorfs.Wrap(vfs.NewMem(), faults), Dir: "db", IngestFrom: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	if err := s.fs.MkdirAll("db/loads", 0o755); err != nil {
		t.Fatal(err)
	}
	s.spillFrom, s.spillAtLeast = 1, 1 // every piece spills as it comes
	load, err := s.NewBulkLoad(rowIDDesc(7))
	if err != nil {
		t.Fatal(err)
	}
	for id := int64(1); id <= 9; id += 3 {
		ids := []int64{id, id + 1, id + 2}
		if err := load.Add(ids, encodeFreshRows(ids)); err != nil {
			t.Fatal(err)
		}
	}
	faults.On.Store(true)
	if _, err := load.Finish("db/loads/x.sst"); !errors.Is(err, errorfs.ErrInjected) {
		t.Fatalf("Finish with its directory's sync failing: %v", err)
	}
	faults.On.Store(false)
	if exists(s.fs, "db/loads/x.sst") {
		t.Fatal("the file of a failed Finish is left")
	}
	seen := map[string]bool{}
	for _, f := range s.spills.files {
		if seen[f.path] {
			t.Fatalf("spill file %s pooled twice", f.path)
		}
		seen[f.path] = true
	}
	if len(seen) == 0 {
		t.Fatal("no spill went back to the pool: the test spills nothing")
	}
	if n := s.freshMem.total(); n != 0 {
		t.Fatalf("%d fresh bytes still held", n)
	}
}
