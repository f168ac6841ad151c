package storage

import (
	"context"
	"testing"

	"github.com/sluice-db/sluice/internal/types"
)

// TestRowCountsCommitWithTheirEpoch: counts reported by two actors (even
// and odd vnodes) become visible only when their epoch commits, vanish
// with an aborted epoch or a discarded actor, and go with the table.
func TestRowCountsCommitWithTheirEpoch(t *testing.T) {
	ctx := context.Background()
	s := openMem(t, nil)
	even, odd := evenOdd()
	open := func(owner ActorID, vnodes types.Bitmap) *StateTable {
		tbl := mustOpenTable(t, s, kvDesc(7), owner, vnodes)
		if err := tbl.TrackRowCounts(ctx); err != nil {
			t.Fatal(err)
		}
		return tbl
	}
	a, b := open(1, even), open(2, odd)
	insert := func(k int64, delta int64) {
		tbl := a
		if vnodeOfK(k)%2 == 1 {
			tbl = b
		}
		row := types.Row{k, "x", k}
		if delta > 0 {
			if err := tbl.Insert(row); err != nil {
				t.Fatal(err)
			}
		} else if err := tbl.Delete(row); err != nil {
			t.Fatal(err)
		}
		tbl.CountRows(row, delta)
	}
	wantCount := func(want int64, when string) {
		t.Helper()
		if n, _, err := s.RowCount(7); err != nil || n != want {
			t.Fatalf("%s: row count %d (%v), want %d", when, n, err, want)
		}
	}
	seal := func(epoch uint64) {
		for _, tbl := range []*StateTable{a, b} {
			if err := tbl.Seal(epoch); err != nil {
				t.Fatal(err)
			}
		}
	}
	for k := range int64(100) {
		insert(k, 1)
	}
	seal(1)
	wantCount(0, "sealed, not committed")
	if err := s.Commit(ctx, 1, nil); err != nil {
		t.Fatal(err)
	}
	wantCount(100, "epoch 1 committed")

	for k := range int64(30) {
		insert(k, -1)
	}
	seal(2)
	s.DiscardActor(1) // the even actor's epoch-2 writes go, counts included
	if err := s.Commit(ctx, 2, nil); err != nil {
		t.Fatal(err)
	}
	var oddDeleted int64
	for k := range int64(30) {
		if vnodeOfK(k)%2 == 1 {
			oddDeleted++
		}
	}
	wantCount(100-oddDeleted, "epoch 2 without the even actor")
	if got := int64(len(scanAll(t, open(3, nil), nil))); got != 100-oddDeleted {
		t.Fatalf("table holds %d rows, its count says %d", got, 100-oddDeleted)
	}

	if err := s.DropTableState(ctx, 7); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.RowCount(7); err != nil || ok {
		t.Fatalf("row count after drop: ok=%v err=%v, want none", ok, err)
	}
	if n, _ := s.TableKeyCount(7); n != 0 {
		t.Fatalf("%d keys left after drop", n)
	}
}

// TestRowCountsOfAnOlderTable: a table written before counts existed is
// counted once when its owner starts tracking, and the count is written
// with the next seal, even one with no rows.
func TestRowCountsOfAnOlderTable(t *testing.T) {
	ctx := context.Background()
	s := openMem(t, nil)
	old := mustOpenTable(t, s, kvDesc(9), 1, nil)
	for k := range int64(40) {
		if err := old.Insert(types.Row{k, "x", k}); err != nil {
			t.Fatal(err)
		}
	}
	if err := old.Seal(1); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(ctx, 1, nil); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.RowCount(9); ok {
		t.Fatal("an untracked table has a count")
	}
	tbl := mustOpenTable(t, s, kvDesc(9), 2, nil)
	if err := tbl.TrackRowCounts(ctx); err != nil {
		t.Fatal(err)
	}
	if err := tbl.Seal(2); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(ctx, 2, nil); err != nil {
		t.Fatal(err)
	}
	if n, ok, err := s.RowCount(9); err != nil || !ok || n != 40 {
		t.Fatalf("row count = %d, %v, %v; want 40", n, ok, err)
	}
	if err := tbl.Insert(types.Row{int64(1), "y", int64(1)}); err != nil {
		t.Fatal(err)
	}
	if err := tbl.TrackRowCounts(ctx); err != nil {
		t.Fatalf("tracking twice: %v", err)
	}
	late := mustOpenTable(t, s, kvDesc(9), 3, nil)
	if err := late.Insert(types.Row{int64(2), "y", int64(2)}); err != nil {
		t.Fatal(err)
	}
	if err := late.TrackRowCounts(ctx); err == nil {
		t.Fatal("tracking after a write was accepted")
	}
}
