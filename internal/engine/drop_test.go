package engine

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// TestDropUnderStall is the reference stall in small: a self-join with
// huge amplification holds the barrier, and dropping it must neither wait
// for that barrier nor harm the sibling view reading the same table.
func TestDropUnderStall(t *testing.T) {
	ctx := context.Background()
	e := openTest(t, t.TempDir())
	ii := []catalog.Column{{Name: "k", Type: types.TInt64}, {Name: "v", Type: types.TInt64}}
	tbl, err := e.CreateTable(ctx, TableSpec{Name: "t", Columns: ii})
	if err != nil {
		t.Fatal(err)
	}
	b := newBuilder(ctx, e)
	if _, err := e.CreateMaterializedView(ctx, b.view("sibling", b.simpleAgg(b.scan(tbl), countStar(), sumOf(1)), []string{"n", "s"})); err != nil {
		t.Fatal(err)
	}
	goroutinesBefore := runtime.NumGoroutine()
	b = newBuilder(ctx, e)
	amp, err := e.CreateMaterializedView(ctx, b.view("amp", b.join(innerJoin, b.scan(tbl), b.scan(tbl), []int{0}, []int{0}),
		[]string{"k1", "v1", "r1", "k2", "v2", "r2"}))
	if err != nil {
		t.Fatal(err)
	}
	const n = 3000 // 9e6 join rows: the barrier after this write is stuck for a long time
	var rows strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&rows, "+ 1 %d\n", i)
	}
	if err := e.Write(ctx, "t", types.MustParseChunk([]types.Type{types.TInt64, types.TInt64}, rows.String())); err != nil {
		t.Fatal(err)
	}
	waitStalled(t, e)

	if err := e.Drop(ctx, "amp", false); err != nil {
		t.Fatal(err)
	}
	flushCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := e.Flush(flushCtx); err != nil {
		t.Fatalf("flush after drop: %v", err)
	}
	got, err := e.Scan(ctx, "sibling")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0][0] != int64(n) || types.Compare(got[0][1], numeric(n*(n+1)/2)) != 0 {
		t.Fatalf("sibling = %v, want n=%d sum=%d", got, n, n*(n+1)/2)
	}
	waitFor(t, "dropped job's state deleted", func() bool {
		for _, id := range append(amp.Job.StateTables, amp.Table.ID) {
			if has, _ := e.Store().HasKeys(id); has {
				return false
			}
		}
		_, stillThere := e.Catalog().ByID(amp.ID)
		return !stillThere
	})
	waitFor(t, "goroutines back to baseline", func() bool { return runtime.NumGoroutine() <= goroutinesBefore+2 })
	if _, ok := e.Catalog().ByName("amp"); ok {
		t.Fatal("amp still in the catalog")
	}
}

// waitStalled waits until a barrier has been in flight for a while.
func waitStalled(t *testing.T, e *Engine) {
	waitFor(t, "a stalled barrier", func() bool {
		st, err := e.Coordinator().Status(context.Background())
		return err == nil && st.Barrier.OldestInFlightAge > 300*time.Millisecond
	})
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestDropRefusesDependentsWithoutCascade(t *testing.T) {
	ctx := context.Background()
	e := openTest(t, t.TempDir())
	ii := []catalog.Column{{Name: "k", Type: types.TInt64}, {Name: "v", Type: types.TInt64}}
	tbl, err := e.CreateTable(ctx, TableSpec{Name: "t", Columns: ii})
	if err != nil {
		t.Fatal(err)
	}
	b := newBuilder(ctx, e)
	v1, err := e.CreateMaterializedView(ctx, b.view("v1", b.hashAgg(b.scan(tbl), []int{0}, countStar()), []string{"k", "n"}))
	if err != nil {
		t.Fatal(err)
	}
	b = newBuilder(ctx, e)
	if _, err := e.CreateMaterializedView(ctx, b.view("v2", b.simpleAgg(b.scan(v1), sumOf(1)), []string{"s"})); err != nil {
		t.Fatal(err)
	}
	if err := e.Drop(ctx, "t", false); sqlerr.CodeOf(err) != sqlerr.DependentObjectsStillExist {
		t.Fatalf("drop without cascade: %v (code %s), want 2BP01", err, sqlerr.CodeOf(err))
	}
	if err := e.Drop(ctx, "t", true); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"t", "v1", "v2"} {
		if _, ok := e.Catalog().ByName(name); ok {
			t.Fatalf("%s survived DROP ... CASCADE", name)
		}
	}
	if _, err := e.CreateTable(ctx, TableSpec{Name: "t", Columns: ii}); err != nil {
		t.Fatalf("re-create after drop: %v", err)
	}
}

func TestOpenRefusesOtherFormatVersion(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e, err := Open(ctx, Options{Dir: dir, BarrierInterval: 20e6})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Store().PutMeta(ctx, formatKey, []byte{0, 0, 0, 0, 0, 0, 0, 99}); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, Options{Dir: dir}); err == nil || !strings.Contains(err.Error(), "incompatible version") {
		t.Fatalf("opened a directory of format 99: %v", err)
	}
}

func TestOpenRefusesLockedDirectory(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e := openTest(t, dir)
	_ = e
	if e2, err := Open(ctx, Options{Dir: dir}); err == nil {
		_ = e2.Close()
		t.Fatal("a second engine opened a directory in use")
	} else {
		if !strings.Contains(err.Error(), "in use by another Sluice process") {
			t.Fatalf("unclear message: %v", err)
		}
	}
}

// TestCrashMidDropFinishesOnRecovery: the drop's first durable step is the
// catalog; if the process dies right after it, the next start finishes the
// drop — the view never comes back and its state is deleted — and a view
// reading a relation caught mid-drop goes with it.
func TestCrashMidDropFinishesOnRecovery(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e, err := Open(ctx, Options{Dir: dir, BarrierInterval: 20e6, Parallelism: 2})
	if err != nil {
		t.Fatal(err)
	}
	ii := []catalog.Column{{Name: "k", Type: types.TInt64}, {Name: "v", Type: types.TInt64}}
	tbl, err := e.CreateTable(ctx, TableSpec{Name: "t", Columns: ii})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Write(ctx, "t", types.MustParseChunk([]types.Type{types.TInt64, types.TInt64}, "+ 1 10\n+ 2 20")); err != nil {
		t.Fatal(err)
	}
	b := newBuilder(ctx, e)
	v1, err := e.CreateMaterializedView(ctx, b.view("v1", b.hashAgg(b.scan(tbl), []int{0}, countStar()), []string{"k", "n"}))
	if err != nil {
		t.Fatal(err)
	}
	b = newBuilder(ctx, e)
	v2, err := e.CreateMaterializedView(ctx, b.view("v2", b.simpleAgg(b.scan(v1), sumOf(1)), []string{"s"}))
	if err != nil {
		t.Fatal(err)
	}
	// The crash: v1 is marked dropping (durably), nothing else happened.
	v1.State = catalog.StateDropping
	if err := e.Catalog().Put(ctx, v1); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = openTest(t, dir)
	for _, r := range []*catalog.Relation{v1, v2} {
		if _, ok := e.Catalog().ByID(r.ID); ok {
			t.Fatalf("%s came back after recovery", r.Name)
		}
		for _, id := range append(r.Job.StateTables, r.Table.ID) {
			if has, err := e.Store().HasKeys(id); err != nil || has {
				t.Fatalf("%s: state table %d still has keys (%v)", r.Name, id, err)
			}
		}
	}
	if rows, err := e.Scan(ctx, "t"); err != nil || len(rows) != 2 {
		t.Fatalf("t = %v, %v; want its 2 rows", rows, err)
	}
}

// TestViewOverGlobalAggregate: a view reading a keyless view (a global
// aggregate's single row) backfills it and follows its updates.
func TestViewOverGlobalAggregate(t *testing.T) {
	ctx := context.Background()
	e := openTest(t, t.TempDir())
	ii := []catalog.Column{{Name: "k", Type: types.TInt64}, {Name: "v", Type: types.TInt64}}
	tbl, err := e.CreateTable(ctx, TableSpec{Name: "t", Columns: ii, PK: []int{0}})
	if err != nil {
		t.Fatal(err)
	}
	write := func(rows string) {
		t.Helper()
		if err := e.Write(ctx, "t", types.MustParseChunk([]types.Type{types.TInt64, types.TInt64}, rows)); err != nil {
			t.Fatal(err)
		}
	}
	write("+ 1 10\n+ 2 20")
	b := newBuilder(ctx, e)
	g, err := e.CreateMaterializedView(ctx, b.view("g", b.simpleAgg(b.scan(tbl), countStar(), sumOf(1)), []string{"n", "s"}))
	if err != nil {
		t.Fatal(err)
	}
	b = newBuilder(ctx, e)
	if _, err := e.CreateMaterializedView(ctx, b.view("gg", b.simpleAgg(b.scan(g), countStar(), maxOf(0, types.TInt64)), []string{"rows", "n"})); err != nil {
		t.Fatal(err)
	}
	check := func(want string) {
		t.Helper()
		if err := e.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		rows, err := e.Scan(ctx, "gg")
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(rows); got != want {
			t.Fatalf("gg = %s, want %s", got, want)
		}
	}
	check("[[1 2]]")
	write("+ 3 30")
	check("[[1 3]]")
	if err := e.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	write("- 1 10")
	check("[[1 2]]")
}
