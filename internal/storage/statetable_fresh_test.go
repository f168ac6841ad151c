package storage

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"testing"
	"weak"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/sluice-db/sluice/internal/types"
)

// rowIDDesc is a table (v varchar, _row_id bigint) keyed by its row id.
func rowIDDesc(id uint32) TableDesc {
	return TableDesc{ID: id, Types: []types.Type{types.TVarchar, types.TInt64}, PK: []int{1}, DistKey: []int{1}}
}

// TestInsertFresh: fresh rows are readable by key until their epoch
// commits and from Pebble after, a later delete in the epoch shadows one,
// ids that fall back often are sorted, a key twice is refused, row counts
// follow, and a scan is refused while they are pending.
func TestInsertFresh(t *testing.T) {
	ctx := context.Background()
	s := openMem(t, nil)
	desc := rowIDDesc(21)
	tbl := mustOpenTable(t, s, desc, ActorID(1), nil)
	if err := tbl.TrackRowCounts(ctx); err != nil {
		t.Fatal(err)
	}
	b := types.NewBuilder(desc.Types, 8)
	for i := range 5 {
		b.Append(types.Insert, types.Row{fmt.Sprint("r", i), int64(100 + i)})
	}
	c := b.Take()
	if ok, err := tbl.InsertFresh(c, []int{0, 2, 4}); !ok || err != nil {
		t.Fatalf("InsertFresh: %v %v", ok, err)
	}
	down := types.NewBuilder(desc.Types, 8)
	for i := range 5 {
		down.Append(types.Insert, types.Row{"down", int64(200 - i)})
	}
	if ok, err := tbl.InsertFresh(down.Take(), []int{0, 1, 2, 3, 4}); !ok || err != nil {
		t.Fatalf("ids that fall back four times (sorted) were refused: %v %v", ok, err)
	}
	if n := len(tbl.fresh); n != 2 {
		t.Fatalf("%d fresh chunks, want 2 (the falling ids sorted into one)", n)
	}
	again := types.NewBuilder(desc.Types, 8)
	for _, id := range []int64{300, 301, 301, 302, 300} {
		again.Append(types.Insert, types.Row{"again", id})
	}
	c2 := again.Take()
	for _, rows := range [][]int{{0, 1, 2}, {0, 1, 3, 4}} {
		if ok, _ := tbl.InsertFresh(c2, rows); ok {
			t.Fatalf("rows %v, an id twice, were taken", rows)
		}
	}
	get := func(id int64) string {
		t.Helper()
		r, ok, err := tbl.Get(ctx, types.Row{id})
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return "absent"
		}
		return fmt.Sprint(r)
	}
	if got := get(102); got != "[r2 102]" {
		t.Fatalf("get 102 = %s", got)
	}
	if got := get(101); got != "absent" {
		t.Fatalf("get 101 (not inserted) = %s", got)
	}
	if err := tbl.Delete(types.Row{"r4", int64(104)}); err != nil {
		t.Fatal(err)
	}
	if got := get(104); got != "absent" {
		t.Fatalf("get 104 after its delete = %s", got)
	}
	if _, err := tbl.Scan(ctx, nil); err == nil {
		t.Fatal("a scan with fresh rows pending was allowed")
	}
	if err := tbl.Seal(1); err != nil {
		t.Fatal(err)
	}
	if got := get(100); got != "[r0 100]" {
		t.Fatalf("get 100 sealed, not committed = %s", got)
	}
	if err := s.Commit(ctx, 1, nil); err != nil {
		t.Fatal(err)
	}
	if got := get(100); got != "[r0 100]" {
		t.Fatalf("get 100 committed = %s", got)
	}
	if n := tbl.OverlayLen(); n != 0 {
		t.Fatalf("%d writes still buffered after the commit", n)
	}
	rows := scanAll(t, tbl, nil)
	if len(rows) != 7 {
		t.Fatalf("committed rows %v, want 100, 102 and 196-200", rows)
	}
	var total int64
	for v := range tbl.rc.n {
		total += tbl.rc.n[v]
	}
	if total != 8 { // eight inserted; the delete is counted by its writer
		t.Fatalf("row counts sum to %d, want 8", total)
	}
}

// TestGetUncommittedSeesFreshRows: fresh rows are uncommitted writes too,
// until their epoch commits.
func TestGetUncommittedSeesFreshRows(t *testing.T) {
	s := openMem(t, nil)
	tbl := mustOpenTable(t, s, rowIDDesc(1), 1, nil)
	c := types.NewChunk([]types.Column{types.ColumnOf(types.TVarchar, "v"), types.ColumnOf(types.TInt64, int64(5))}, nil)
	if ok, err := tbl.InsertFresh(c, []int{0}); err != nil || !ok {
		t.Fatalf("InsertFresh: %v %v", ok, err)
	}
	if _, ok, err := tbl.GetUncommitted(types.Row{int64(5)}); err != nil || !ok {
		t.Fatalf("fresh row not seen: %v %v", ok, err)
	}
	if err := tbl.Seal(1); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(context.Background(), 1, nil); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := tbl.GetUncommitted(types.Row{int64(5)}); ok {
		t.Fatal("a committed fresh row read as uncommitted")
	}
}

// TestInsertFreshDoesNotKeepTheChunk: fresh rows are kept encoded, so the
// chunk they came in (a bulk epoch's columns, about twice the memory) can
// be collected as soon as its other readers are done with it.
func TestInsertFreshDoesNotKeepTheChunk(t *testing.T) {
	s := openMem(t, nil)
	tbl := mustOpenTable(t, s, rowIDDesc(2), 1, nil)
	b := types.NewBuilder(rowIDDesc(2).Types, 101)
	for i := range 100 {
		b.Append(types.Insert, types.Row{fmt.Sprint("v", i), int64(i + 1)})
	}
	c := b.Take()
	rows := make([]int, 100)
	for i := range rows {
		rows[i] = i
	}
	if ok, err := tbl.InsertFresh(c, rows); !ok || err != nil {
		t.Fatalf("InsertFresh: %v %v", ok, err)
	}
	kept := weak.Make(c)
	c = nil
	runtime.GC()
	if kept.Value() != nil {
		t.Fatal("the state table still holds the chunk its fresh rows came in")
	}
	if r, ok, err := tbl.Get(context.Background(), types.Row{int64(42)}); err != nil || !ok || r[0] != "v41" {
		t.Fatalf("row 42 = %v %v %v", r, ok, err)
	}
}

// TestInsertFreshStretches: rows whose ids fall back a few times (a chunk
// cut across sorted pieces) are taken as one fresh chunk per rising
// stretch, readable by key, and committed.
func TestInsertFreshStretches(t *testing.T) {
	ctx := context.Background()
	s := openMem(t, nil)
	desc := rowIDDesc(22)
	tbl := mustOpenTable(t, s, desc, ActorID(1), nil)
	ids := []int64{10, 11, 12, 5, 6, 20, 30, 1}
	b := types.NewBuilder(desc.Types, len(ids)+1)
	for _, id := range ids {
		b.Append(types.Insert, types.Row{fmt.Sprint("r", id), id})
	}
	c := b.Take()
	if ok, err := tbl.InsertFresh(c, []int{0, 1, 2, 3, 4, 5, 6, 7}); !ok || err != nil {
		t.Fatalf("InsertFresh of three falls: %v %v", ok, err)
	}
	for _, id := range ids {
		if r, ok, err := tbl.Get(ctx, types.Row{id}); err != nil || !ok || r[1] != id {
			t.Fatalf("get %d = %v %v %v", id, r, ok, err)
		}
	}
	if err := tbl.Seal(1); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(ctx, 1, nil); err != nil {
		t.Fatal(err)
	}
	var got []int64
	for _, r := range scanAll(t, tbl, nil) {
		got = append(got, r[1].(int64))
	}
	slices.Sort(got) // a scan goes vnode by vnode
	if want := []int64{1, 5, 6, 10, 11, 12, 20, 30}; !slices.Equal(got, want) {
		t.Fatalf("committed ids %v, want %v", got, want)
	}
}

// TestInsertFreshKeyed: a table keyed by text and an int takes a chunk of
// inserts in any order as fresh rows, none of them in its overlay, finds
// each by key, refuses a key twice, and commits them in key order.
func TestInsertFreshKeyed(t *testing.T) {
	ctx := context.Background()
	s := openMem(t, nil)
	desc := TableDesc{ID: 22, Types: []types.Type{types.TVarchar, types.TInt32, types.TInt64}, PK: []int{0, 1}, DistKey: []int{0}}
	tbl := mustOpenTable(t, s, desc, ActorID(1), nil)
	b := types.NewBuilder(desc.Types, 8)
	for _, k := range []string{"m", "b", "x", "a"} {
		b.Append(types.Insert, types.Row{k, int64(len(k)), int64(k[0])})
	}
	c := b.Take()
	if ok, err := tbl.InsertFresh(c, []int{0, 1, 2, 3}); !ok || err != nil {
		t.Fatalf("InsertFresh: %v %v", ok, err)
	}
	if n := tbl.overlay.len(); n != 0 || len(tbl.fresh) != 1 {
		t.Fatalf("%d rows went to the overlay, %d fresh chunks", n, len(tbl.fresh))
	}
	twice := types.NewBuilder(desc.Types, 8)
	twice.Append(types.Insert, types.Row{"q", int64(1), int64(1)})
	twice.Append(types.Insert, types.Row{"q", int64(1), int64(2)})
	if ok, _ := tbl.InsertFresh(twice.Take(), []int{0, 1}); ok {
		t.Fatal("a key twice was taken")
	}
	for _, k := range []string{"a", "b", "m", "x", "q"} {
		row, ok, err := tbl.Get(ctx, types.Row{k, int64(1)})
		if err != nil || ok != (k != "q") || ok && row[2] != int64(k[0]) {
			t.Fatalf("get %s = %v %v %v", k, row, ok, err)
		}
	}
	if err := tbl.Seal(1); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(ctx, 1, nil); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, r := range scanAll(t, tbl, nil) {
		keys = append(keys, r[0].(string))
	}
	slices.Sort(keys)
	if fmt.Sprint(keys) != "[a b m x]" {
		t.Fatalf("committed keys %v", keys)
	}
}

// TestOverwriteFresh: fresh overwrites of committed rows, in any order,
// read and commit as the new rows, and leave the row counts alone.
func TestOverwriteFresh(t *testing.T) {
	ctx := context.Background()
	s := openMem(t, nil)
	desc := rowIDDesc(23)
	tbl := mustOpenTable(t, s, desc, ActorID(1), nil)
	if err := tbl.TrackRowCounts(ctx); err != nil {
		t.Fatal(err)
	}
	b := types.NewBuilder(desc.Types, 16)
	for i := range 10 {
		b.Append(types.Insert, types.Row{"old", int64(i)})
	}
	if ok, err := tbl.InsertFresh(b.Take(), []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}); !ok || err != nil {
		t.Fatalf("InsertFresh: %v %v", ok, err)
	}
	if err := tbl.Seal(1); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(ctx, 1, nil); err != nil {
		t.Fatal(err)
	}
	for _, ids := range [][]int64{{9, 1, 7, 3, 5, 0}, {3, 4}} { // 3 twice: the later wins
		up := types.NewBuilder(desc.Types, 16)
		for _, id := range ids {
			up.Append(types.UpdateInsert, types.Row{fmt.Sprint("new", len(ids)), id})
		}
		rows := make([]int, len(ids))
		for i := range rows {
			rows[i] = i
		}
		if ok, err := tbl.OverwriteFresh(up.Take(), rows); !ok || err != nil {
			t.Fatalf("OverwriteFresh %v: %v %v", ids, ok, err)
		}
	}
	want := "[[new6 0] [new6 1] [old 2] [new2 3] [new2 4] [new6 5] [old 6] [new6 7] [old 8] [new6 9]]"
	read := func() string {
		var rows []types.Row
		for id := range int64(10) {
			r, ok, err := tbl.Get(ctx, types.Row{id})
			if err != nil || !ok {
				t.Fatalf("get %d: %v %v", id, ok, err)
			}
			rows = append(rows, r)
		}
		return fmt.Sprint(rows)
	}
	if got := read(); got != want {
		t.Fatalf("before the commit: %s", got)
	}
	if err := tbl.Seal(2); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(ctx, 2, nil); err != nil {
		t.Fatal(err)
	}
	if got := read(); got != want {
		t.Fatalf("after the commit: %s", got)
	}
	var total int64
	for v := range tbl.rc.n {
		total += tbl.rc.n[v]
	}
	if total != 10 {
		t.Fatalf("row counts sum to %d, want 10", total)
	}
}

// TestSealOfFreshRowsLeavesNoWrites: an epoch of fresh rows only seals an
// empty overlay run, which holds no write, so the next epoch may take
// fresh rows before the first commits; a run of a real write does not.
func TestSealOfFreshRowsLeavesNoWrites(t *testing.T) {
	s := openMem(t, nil)
	desc := TableDesc{ID: 23, Types: []types.Type{types.TVarchar, types.TInt64}, PK: []int{0}, DistKey: []int{0}}
	tbl := mustOpenTable(t, s, desc, ActorID(1), nil)
	b := types.NewBuilder(desc.Types, 8)
	b.Append(types.Insert, types.Row{"a", int64(1)})
	if ok, err := tbl.InsertFresh(b.Take(), []int{0}); !ok || err != nil {
		t.Fatalf("InsertFresh: %v %v", ok, err)
	}
	if err := tbl.Seal(1); err != nil {
		t.Fatal(err)
	}
	if !tbl.HoldsNoWrites() {
		t.Fatal("a sealed epoch of fresh rows only holds a write")
	}
	if err := tbl.Insert(types.Row{"b", int64(2)}); err != nil {
		t.Fatal(err)
	}
	if err := tbl.Seal(2); err != nil {
		t.Fatal(err)
	}
	if tbl.HoldsNoWrites() {
		t.Fatal("a sealed epoch of an insert holds no write")
	}
}

// TestInsertFreshUnwritten: fresh rows beside other uncommitted writes
// are taken unless one of their keys has such a write, unsealed or in an
// uncommitted sealed epoch (a delete before a re-insert, which the fresh
// row, sealed first, would not outlive); the store then holds what the
// writes in order say.
func TestInsertFreshUnwritten(t *testing.T) {
	ctx := context.Background()
	s := openIngest(t, vfs.NewMem(), 1)
	desc := rowIDDesc(9)
	tbl := mustOpenTable(t, s, desc, 1, nil)
	chunk := func(ids ...int64) (*types.Chunk, []int) {
		b := types.NewBuilder(desc.Types, len(ids)+1)
		rows := make([]int, len(ids))
		for k, id := range ids {
			b.Append(types.Insert, types.Row{fmt.Sprint("v", id), id})
			rows[k] = k
		}
		return b.Take(), rows
	}
	insertFreshRange(t, tbl, 1, 10)
	if err := tbl.Seal(1); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(ctx, 1, nil); err != nil {
		t.Fatal(err)
	}
	if err := tbl.Delete(types.Row{"v3", int64(3)}); err != nil {
		t.Fatal(err)
	}
	if err := tbl.Seal(2); err != nil { // sealed, not committed
		t.Fatal(err)
	}
	if err := tbl.Delete(types.Row{"v5", int64(5)}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []int64{3, 5} {
		if ok, err := tbl.InsertFreshUnwritten(chunk(20, id, 21)); ok || err != nil {
			t.Fatalf("rows with key %d, deleted uncommitted: taken=%v err=%v, want refused", id, ok, err)
		}
	}
	if ok, err := tbl.InsertFreshUnwritten(chunk(20, 21, 22)); !ok || err != nil {
		t.Fatalf("rows of unwritten keys beside other writes: taken=%v err=%v", ok, err)
	}
	if err := tbl.Insert(types.Row{"again", int64(5)}); err != nil {
		t.Fatal(err)
	}
	if err := tbl.Delete(types.Row{"v21", int64(21)}); err != nil {
		t.Fatal(err)
	}
	if err := tbl.Seal(3); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(ctx, 3, nil); err != nil {
		t.Fatal(err)
	}
	want := "[[again 5] [v1 1] [v2 2] [v20 20] [v22 22] [v4 4] [v6 6] [v7 7] [v8 8] [v9 9]]"
	if got := committedRows(t, s, desc); got != want {
		t.Fatalf("committed:\n got %s\nwant %s", got, want)
	}
}
