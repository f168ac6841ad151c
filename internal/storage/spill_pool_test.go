package storage

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/sluice-db/sluice/internal/types"
)

// TestSpillFileIsWrittenOver: a merged spill's file goes back to the pool
// and the next spill, shorter, writes over it; the seal's merge reads only
// the new spill, not the older one's bytes past it, and the table holds
// exactly the rows inserted.
func TestSpillFileIsWrittenOver(t *testing.T) {
	fs := vfs.NewMem()
	s := openIngest(t, fs, 1)
	s.spillFrom, s.spillAtLeast = 1, 1
	tbl := mustOpenTable(t, s, rowIDDesc(45), 1, nil)

	insertFreshRange(t, tbl, 1, 3000) // one long spill
	if !unsealedSpilled(tbl) {
		t.Fatal("no spill")
	}
	sealCommit(t, s, tbl, 1)
	pooled := spillFiles(t, fs)
	if len(pooled) != 1 || len(s.spills.files) != 1 {
		t.Fatalf("after the seal: spill files %v, pool %v; want the one spill kept", pooled, s.spills.files)
	}

	insertFreshRange(t, tbl, 3000, 3100) // a short one, over the long one
	if len(s.spills.files) != 0 {
		t.Fatalf("the second spill did not take the pooled file: pool %v", s.spills.files)
	}
	if got := spillFiles(t, fs); len(got) != 1 || got[0] != pooled[0] {
		t.Fatalf("spill files %v, want %v written over", got, pooled)
	}
	sealCommit(t, s, tbl, 2)

	rows := scanAll(t, tbl, nil)
	if len(rows) != 3099 {
		t.Fatalf("%d rows after both loads, want 3099", len(rows))
	}
	for i, r := range rows {
		id := r[1].(int64)
		if r[0] != fmt.Sprint("v", id) {
			t.Fatalf("row %d: %v", i, r)
		}
	}
}

// TestSpillPoolIsBounded: a spill whose file would take the pool past its
// bound is removed instead.
func TestSpillPoolIsBounded(t *testing.T) {
	fs := vfs.NewMem()
	s := openIngest(t, fs, 1)
	if !s.spills.put(pooledSpill{path: "a", size: spillPoolBytes - 10}) {
		t.Fatal("a file below the bound was refused")
	}
	f, err := fs.Create("b", vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	s.retireSpill(pooledSpill{path: "b", size: 11})
	if _, err := fs.Stat("b"); err == nil {
		t.Fatal("a file past the bound was kept")
	}
}

func sealCommit(t *testing.T, s *Store, tbl *StateTable, epoch uint64) {
	t.Helper()
	if err := tbl.Seal(epoch); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(t.Context(), epoch, nil); err != nil {
		t.Fatal(err)
	}
	tbl.maybePrune()
}

// spillFiles lists the spill files of the store's ingest directory.
func spillFiles(t *testing.T, fs vfs.FS) []string {
	t.Helper()
	names, err := fs.List(fs.PathJoin("db", ingestDirName))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range names {
		if strings.HasSuffix(n, ".spill") {
			out = append(out, n)
		}
	}
	return out
}

// TestAReadRacingTheCommitOfSpilledRows: a read of a spilled fresh row
// opens the sealed file the first time; when the commit has ingested it
// (taking the file away) after the read's prune looked, the row must be
// read from Pebble, not fail the read (and the job).
func TestAReadRacingTheCommitOfSpilledRows(t *testing.T) {
	s := openIngest(t, vfs.NewMem(), 1)
	s.spillFrom, s.spillAtLeast = 1, 1
	tbl := mustOpenTable(t, s, rowIDDesc(46), 1, nil)
	insertFreshRange(t, tbl, 1, 3000)
	if !unsealedSpilled(tbl) {
		t.Fatal("no spill")
	}
	if err := tbl.Seal(1); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(t.Context(), 1, nil); err != nil {
		t.Fatal(err)
	}
	// As a read whose prune looked before the commit: the chunks are
	// still there, their sealed file gone.
	key, err := tbl.keyOf(types.Row{int64(1234)})
	if err != nil {
		t.Fatal(err)
	}
	row, ok, err := tbl.freshGet(types.Row{int64(1234)}, key)
	if err != nil || ok {
		t.Fatalf("fresh read after the commit took the file: %v %v %v; want a miss (the row is in Pebble)", row, ok, err)
	}
	if row, ok, err := tbl.Get(context.Background(), types.Row{int64(1234)}); err != nil || !ok || row[0] != "v1234" {
		t.Fatalf("Get 1234 = %v %v %v", row, ok, err)
	}
}
