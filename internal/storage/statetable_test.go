package storage

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

func TestOpenTableRejectsBadDesc(t *testing.T) {
	s := openMem(t, nil)
	good := kvDesc(1)
	cases := map[string]func(d *TableDesc){
		"no columns":        func(d *TableDesc) { d.Types = nil; d.PK = nil; d.DistKey = nil; d.Orders = nil },
		"pk out of range":   func(d *TableDesc) { d.PK = []int{0, 5} },
		"pk repeated":       func(d *TableDesc) { d.PK = []int{0, 0} },
		"orders length":     func(d *TableDesc) { d.Orders = d.Orders[:1] },
		"dist not in pk":    func(d *TableDesc) { d.DistKey = []int{2} },
		"unknown type":      func(d *TableDesc) { d.Types = []types.Type{types.TInt64, types.TUnknown, types.TInt64} },
		"dist out of range": func(d *TableDesc) { d.DistKey = []int{-1} },
	}
	for name, mutate := range cases {
		d := good
		d.Types = append([]types.Type(nil), good.Types...)
		mutate(&d)
		if _, err := s.OpenTable(d, 1, nil); !errors.Is(err, ErrBadDesc) {
			t.Errorf("%s: err = %v, want ErrBadDesc", name, err)
		}
	}
	if _, err := s.OpenTable(good, 1, nil); err != nil {
		t.Fatalf("good desc: %v", err)
	}
}

func TestWrongRowsAreErrors(t *testing.T) {
	s := openMem(t, nil)
	even, _ := evenOdd()
	tbl := mustOpenTable(t, s, kvDesc(1), 1, even)
	if err := tbl.Insert(types.Row{int64(1), "x"}); err == nil {
		t.Error("short row accepted")
	}
	if err := tbl.Insert(types.Row{"1", "x", int64(1)}); err == nil {
		t.Error("wrong datum type accepted")
	}
	k := int64(0)
	for vnodeOfK(k)%2 == 0 {
		k++
	}
	if err := tbl.Insert(types.Row{k, "x", int64(1)}); !errors.Is(err, ErrVNodeNotOwned) {
		t.Errorf("row of an odd vnode: %v, want ErrVNodeNotOwned", err)
	}
	if _, _, err := tbl.Get(context.Background(), types.Row{k, "x"}); !errors.Is(err, ErrVNodeNotOwned) {
		t.Errorf("get of an odd vnode: %v, want ErrVNodeNotOwned", err)
	}
}

// TestDescOrderAndPrefixScan checks DESC NULLS FIRST order within a prefix
// and that a row read back through committed data decodes exactly.
func TestDescOrderAndPrefixScan(t *testing.T) {
	ctx := context.Background()
	s := openMem(t, nil)
	tbl := mustOpenTable(t, s, kvDesc(1), 1, nil)
	for _, name := range []types.Datum{"b", nil, "a", "c", ""} {
		if err := tbl.Insert(types.Row{int64(5), name, int64(1)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := tbl.Insert(types.Row{int64(6), "z", int64(1)}); err != nil {
		t.Fatal(err)
	}
	want := "[[5 <nil> 1] [5 c 1] [5 b 1] [5 a 1] [5  1]]"
	if got := fmt.Sprint(scanAll(t, tbl, types.Row{int64(5)})); got != want {
		t.Fatalf("uncommitted prefix scan = %s, want %s", got, want)
	}
	if err := tbl.Seal(1); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(ctx, 1, nil); err != nil {
		t.Fatal(err)
	}
	if n := tbl.OverlayLen(); n != 0 {
		t.Fatalf("overlay holds %d entries after commit, want 0", n)
	}
	if got := fmt.Sprint(scanAll(t, tbl, types.Row{int64(5)})); got != want {
		t.Fatalf("committed prefix scan = %s, want %s", got, want)
	}
	// Full-PK prefix: exactly one row.
	if got := scanAll(t, tbl, types.Row{int64(5), "a"}); len(got) != 1 {
		t.Fatalf("full-pk scan = %v", got)
	}
	// Uncommitted delete hides a committed row; update moves a row.
	if err := tbl.Delete(types.Row{int64(5), "c", nil}); err != nil {
		t.Fatal(err)
	}
	if err := tbl.Update(types.Row{int64(5), "a", int64(1)}, types.Row{int64(5), "d", int64(2)}); err != nil {
		t.Fatal(err)
	}
	want = "[[5 <nil> 1] [5 d 2] [5 b 1] [5  1]]"
	if got := fmt.Sprint(scanAll(t, tbl, types.Row{int64(5)})); got != want {
		t.Fatalf("merged prefix scan = %s, want %s", got, want)
	}
}

func TestScanFromResumes(t *testing.T) {
	ctx := context.Background()
	s := openMem(t, nil)
	desc := TableDesc{ID: 4, Types: []types.Type{types.TInt64, types.TInt64}, PK: []int{0}}
	tbl := mustOpenTable(t, s, desc, 1, nil)
	for i := range 10 {
		if err := tbl.Insert(types.Row{int64(i), int64(i * i)}); err != nil {
			t.Fatal(err)
		}
		if i == 4 {
			if err := tbl.Seal(1); err != nil {
				t.Fatal(err)
			}
			if err := s.Commit(ctx, 1, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	var all []types.Row
	var after types.Row
	for {
		rows, err := tbl.ScanFrom(ctx, 0, after, 3)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) == 0 {
			break
		}
		all = append(all, rows...)
		after = tbl.PKOf(rows[len(rows)-1])
	}
	if len(all) != 10 {
		t.Fatalf("resumed scan saw %d rows: %v", len(all), all)
	}
	for i, r := range all {
		if r[0] != int64(i) {
			t.Fatalf("row %d = %v", i, r)
		}
	}
	// The snapshot sees only the committed half.
	snap, err := s.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	rows, err := snap.ScanFrom(ctx, desc, 0, types.Row{int64(1)}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(rows) != "[[2 4] [3 9] [4 16]]" {
		t.Fatalf("snapshot scan from 1 = %v", rows)
	}
}

func TestDiscardActorDropsOnlyItsBatches(t *testing.T) {
	ctx := context.Background()
	s := openMem(t, nil)
	a := mustOpenTable(t, s, kvDesc(1), 1, nil)
	b := mustOpenTable(t, s, kvDesc(2), 2, nil)
	for _, tbl := range []*StateTable{a, b} {
		if err := tbl.Insert(types.Row{int64(1), "x", int64(1)}); err != nil {
			t.Fatal(err)
		}
		if err := tbl.Seal(1); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.DiscardActor(1); n != 1 {
		t.Fatalf("discarded %d batches, want 1", n)
	}
	if err := s.Commit(ctx, 1, nil); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.TableKeyCount(1); n != 0 {
		t.Fatalf("discarded actor's table has %d keys", n)
	}
	if n, _ := s.TableKeyCount(2); n != 1 {
		t.Fatalf("other actor's table has %d keys, want 1", n)
	}
}

func TestDropTableStateLeavesNoKey(t *testing.T) {
	ctx := context.Background()
	s := openMem(t, nil)
	tbl := mustOpenTable(t, s, kvDesc(1), 1, nil)
	neighbour := mustOpenTable(t, s, kvDesc(2), 1, nil)
	for i := range 100 {
		for _, x := range []*StateTable{tbl, neighbour} {
			if err := x.Insert(types.Row{int64(i), "x", int64(i)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, x := range []*StateTable{tbl, neighbour} {
		if err := x.Seal(1); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Commit(ctx, 1, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendDML(ctx, 1, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := tbl.Insert(types.Row{int64(500), "x", int64(1)}); err != nil {
		t.Fatal(err)
	}
	if err := tbl.Seal(2); err != nil { // staged, then dropped
		t.Fatal(err)
	}
	for range 2 { // idempotent
		if err := s.DropTableState(ctx, 1); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Commit(ctx, 2, nil); err != nil {
		t.Fatal(err)
	}
	if has, err := s.HasKeys(1); err != nil || has {
		t.Fatalf("dropped table has keys: %v %v", has, err)
	}
	if n, _ := s.TableKeyCount(2); n != 100 {
		t.Fatalf("neighbour lost keys: %d", n)
	}
	if err := tbl.Seal(3); !errors.Is(err, ErrTableDropped) {
		t.Fatalf("seal after drop = %v, want ErrTableDropped", err)
	}
}

func TestAbortUncommittedMakesTablesStale(t *testing.T) {
	ctx := context.Background()
	s := openMem(t, nil)
	tbl := mustOpenTable(t, s, kvDesc(1), 1, nil)
	if err := tbl.Insert(types.Row{int64(1), "x", int64(1)}); err != nil {
		t.Fatal(err)
	}
	if err := tbl.Seal(1); err != nil {
		t.Fatal(err)
	}
	if err := s.StageMeta(1, "m", []byte("v")); err != nil {
		t.Fatal(err)
	}
	s.AbortUncommitted()
	if err := tbl.Seal(2); !errors.Is(err, ErrStaleTable) {
		t.Fatalf("seal after abort = %v, want ErrStaleTable", err)
	}
	if err := s.Commit(ctx, 1, nil); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.TableKeyCount(1); n != 0 {
		t.Fatalf("aborted epoch left %d keys", n)
	}
	if _, ok, _ := s.Meta("m"); ok {
		t.Fatal("aborted staged meta was committed")
	}
}

func TestWaitCommitted(t *testing.T) {
	ctx := context.Background()
	s := openMem(t, nil)
	done := make(chan error, 1)
	go func() { done <- s.WaitCommitted(ctx, 2) }()
	if err := s.Commit(ctx, 1, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		t.Fatalf("WaitCommitted(2) returned at epoch 1: %v", err)
	case <-time.After(10 * time.Millisecond):
	}
	if err := s.Commit(ctx, 2, nil); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	go func() { done <- s.WaitCommitted(cctx, 10) }()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled wait = %v", err)
	}
	if err := s.Commit(ctx, 2, nil); err == nil {
		t.Fatal("re-commit of epoch 2 accepted")
	}
}

func TestMetaPutScan(t *testing.T) {
	ctx := context.Background()
	s := openMem(t, nil)
	for _, n := range []string{"cat/b", "cat/a", "other"} {
		if err := s.PutMeta(ctx, n, []byte(n)); err != nil {
			t.Fatal(err)
		}
	}
	es, err := s.ScanMeta(ctx, "cat/")
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 2 || es[0].Name != "cat/a" || string(es[1].Value) != "cat/b" {
		t.Fatalf("scan meta = %v", es)
	}
	if err := s.DeleteMeta(ctx, "cat/a"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.Meta("cat/a"); ok {
		t.Fatal("deleted meta still there")
	}
}

func TestSingletonTableUsesVNodeZero(t *testing.T) {
	s := openMem(t, nil)
	var only0 types.Bitmap
	only0.Set(0)
	desc := TableDesc{ID: 8, Types: []types.Type{types.TInt64}}
	tbl := mustOpenTable(t, s, desc, 1, only0)
	if err := tbl.Insert(types.Row{int64(41)}); err != nil {
		t.Fatal(err)
	}
	if err := tbl.Insert(types.Row{int64(42)}); err != nil { // same empty PK: replaces
		t.Fatal(err)
	}
	row, ok, err := tbl.Get(context.Background(), types.Row{})
	if err != nil || !ok || row[0] != int64(42) {
		t.Fatalf("singleton get = %v %v %v", row, ok, err)
	}
	_ = codec.VNodeCount
}

// TestGetUncommittedReadsNoCommittedRow: GetUncommitted sees a write while
// its epoch is unsealed or sealed but uncommitted, tombstones included,
// and nothing once it is committed (Pebble is never read).
func TestGetUncommittedReadsNoCommittedRow(t *testing.T) {
	ctx := context.Background()
	s := openMem(t, nil)
	tbl := mustOpenTable(t, s, kvDesc(1), 1, nil)
	pk := types.Row{int64(7), "k"}
	get := func() bool {
		t.Helper()
		_, ok, err := tbl.GetUncommitted(pk)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if err := tbl.Insert(types.Row{int64(7), "k", int64(1)}); err != nil {
		t.Fatal(err)
	}
	if !get() {
		t.Fatal("unsealed write not seen")
	}
	if err := tbl.Seal(1); err != nil {
		t.Fatal(err)
	}
	if !get() {
		t.Fatal("sealed, uncommitted write not seen")
	}
	if err := s.Commit(ctx, 1, nil); err != nil {
		t.Fatal(err)
	}
	if get() {
		t.Fatal("committed row read: only uncommitted writes may be")
	}
	if _, ok, _ := tbl.Get(ctx, pk); !ok {
		t.Fatal("Get lost the committed row")
	}
	if err := tbl.Delete(types.Row{int64(7), "k", int64(1)}); err != nil {
		t.Fatal(err)
	}
	if get() {
		t.Fatal("a tombstone read as a row")
	}
}
