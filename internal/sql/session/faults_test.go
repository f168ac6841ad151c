package session

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"github.com/sluice-db/sluice/internal/storage/storagetest"

	"github.com/sluice-db/sluice/internal/engine"
)

// storeFaults fails, at random while on, the writes, syncs, creates, links
// and renames of the store's files that are not fatal to Pebble by design
// (its WAL, MANIFEST, OPTIONS, markers and directory syncs: a process
// restart, which the crash tests cover): DML segments, ingested and
// flushed sstables, the ACKNOWLEDGED count.
type storeFaults struct {
	on    atomic.Bool
	mu    sync.Mutex
	rng   *rand.Rand
	fired atomic.Int64
}

func (f *storeFaults) MaybeError(op errorfs.Op) error {
	if !f.on.Load() {
		return nil
	}
	base := op.Path[strings.LastIndex(op.Path, "/")+1:]
	if !strings.Contains(base, ".") && base != "ACKNOWLEDGED" || strings.HasSuffix(base, ".log") ||
		strings.HasPrefix(base, "MANIFEST") || strings.HasPrefix(base, "OPTIONS") || strings.HasPrefix(base, "marker.") {
		return nil
	}
	// Creating, linking or renaming a file fails one time in five; writing
	// and syncing Sluice's own files one time in twenty. Pebble's sstables
	// fail only at creation: a flush writes hundreds of blocks, and failing
	// any of them at these rates would fail every flush, stalling writes
	// for as long as the faults last (a disk that always fails).
	p := 0.0
	switch op.Kind {
	case errorfs.OpCreate, errorfs.OpLink, errorfs.OpRename:
		p = 0.2
	case errorfs.OpFileWrite, errorfs.OpFileWriteAt, errorfs.OpFileSync, errorfs.OpFileSyncData, errorfs.OpFileSyncTo:
		if !strings.HasSuffix(base, ".sst") && !strings.HasSuffix(base, ".blob") {
			p = 0.05
		}
	}
	f.mu.Lock()
	hit := f.rng.Float64() < p
	f.mu.Unlock()
	if hit {
		f.fired.Add(1)
		return errorfs.ErrInjected
	}
	return nil
}

func (f *storeFaults) String() string { return "storeFaults" }

// TestFaultsUnderTheStore: DML with views while the store's files fail at
// random (statements fail or succeed, the server does not crash), then a
// crash that keeps half of the unsynced data: after recovery the table
// holds exactly the acknowledged changes and every view equals its query
// recomputed from the table.
func TestFaultsUnderTheStore(t *testing.T) {
	fs := vfs.NewCrashableMem()
	faults := &storeFaults{rng: rand.New(rand.NewPCG(5, 5))}
	opts := engine.Options{FS: errorfs.Wrap(fs, faults), Dir: "data", BarrierInterval: 5 * time.Millisecond, Parallelism: 2,
		CheckInserts: true}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, err := StartPlayground(ctx, opts, Config{})
	if err != nil {
		t.Fatal(err)
	}
	c := connect(t, p)
	exec(t, c, "CREATE TABLE t (id int PRIMARY KEY, g int, v text)")
	exec(t, c, "CREATE TABLE u (id int PRIMARY KEY, pad text)") // bulk loads: DML segments
	views := map[string]string{
		"per_g": "SELECT g, count(*) AS n, max(v) AS hi FROM t GROUP BY g",
		"pairs": "SELECT a.id, b.id AS other FROM t a JOIN t b ON a.g = b.g AND a.id < b.id",
	}
	for name, q := range views {
		exec(t, c, "CREATE MATERIALIZED VIEW "+name+" AS "+q)
	}
	model := map[int]string{}
	r := rand.New(rand.NewPCG(6, 6))
	faults.on.Store(true)
	failed, bulk := 0, 0
	for i := range 300 {
		id, g := r.IntN(60), r.IntN(5)
		v := fmt.Sprintf("%d:%s", g, strings.Repeat("x", r.IntN(3)*3000)) // some big enough for segments
		var sql string
		switch r.IntN(3) {
		case 0:
			sql = fmt.Sprintf("INSERT INTO t VALUES (%d, %d, '%s') ON CONFLICT (id) DO UPDATE SET g = excluded.g, v = excluded.v", id, g, v)
		case 1:
			sql = fmt.Sprintf("UPDATE t SET g = %d, v = '%s' WHERE id = %d", g, v, id)
		default:
			sql = fmt.Sprintf("DELETE FROM t WHERE id = %d", id)
		}
		if _, err := c.Exec(ctx, sql); err != nil {
			failed++
			continue
		}
		switch {
		case strings.HasPrefix(sql, "INSERT"):
			model[id] = fmt.Sprintf("%d %s", g, v)
		case strings.HasPrefix(sql, "UPDATE"):
			if _, ok := model[id]; ok {
				model[id] = fmt.Sprintf("%d %s", g, v)
			}
		default:
			delete(model, id)
		}
		if i%100 == 99 {
			_, _ = c.Exec(ctx, "FLUSH")
		}
		if i%100 == 50 { // a record of more than 1 MB: a DML segment
			batch := fmt.Sprintf("INSERT INTO u SELECT g, repeat('y', 100) FROM generate_series(%d, %d) g", i*1000, i*1000+11999)
			if _, err := c.Exec(ctx, batch); err != nil {
				failed++
			} else {
				bulk += 12000
			}
		}
	}
	faults.on.Store(false)
	t.Logf("%d faults injected, %d statements failed, %d bulk rows acknowledged", faults.fired.Load(), failed, bulk)
	crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 50, RNG: rand.New(rand.NewPCG(7, 7))})
	_ = p.Close()

	opts.FS = crashed
	p2, err := StartPlayground(ctx, opts, Config{})
	if err != nil {
		t.Fatalf("reopen after faults and a crash: %v", err)
	}
	defer p2.Close()
	c2 := connect(t, p2)
	exec(t, c2, "FLUSH")
	var want []string
	for id, gv := range model {
		want = append(want, fmt.Sprintf("%d %s", id, gv))
	}
	sort.Strings(want)
	got := queryStrings(t, c2, "SELECT id, g, v FROM t")
	sort.Strings(got)
	if !slices.Equal(got, want) {
		t.Fatalf("table after recovery: %d rows, want %d acknowledged", len(got), len(want))
	}
	if got := queryStrings(t, c2, "SELECT count(*) FROM u"); !slices.Equal(got, []string{fmt.Sprint(bulk)}) {
		t.Fatalf("bulk table after recovery: %q rows, want %d acknowledged", got, bulk)
	}
	for name, q := range views {
		v, r := queryStrings(t, c2, "SELECT * FROM "+name), queryStrings(t, c2, q)
		sort.Strings(v)
		sort.Strings(r)
		if !slices.Equal(v, r) {
			t.Errorf("view %s: %d rows, its query %d", name, len(v), len(r))
		}
	}
}

// TestStalledStoreTimesOut: on a disk where every sstable write fails the
// store stalls writes; an INSERT then ends at its statement_timeout with
// 57014 and a detail naming the stall, and is not applied; once the disk
// works again the bulk load that met the stall finishes and nothing
// acknowledged is missing.
func TestStalledStoreTimesOut(t *testing.T) {
	faults := &storagetest.FailingFiles{Suffix: ".sst"}
	opts := engine.Options{FS: errorfs.Wrap(vfs.NewMem(), faults), Dir: "data", BarrierInterval: 5 * time.Millisecond,
		Parallelism: 2}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, err := StartPlayground(ctx, opts, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	loader, c := connect(t, p), connect(t, p)
	exec(t, c, "CREATE TABLE t (id int PRIMARY KEY, v text)")
	exec(t, c, "CREATE TABLE u (id int PRIMARY KEY, v text)") // not locked by the load
	faults.On.Store(true)
	var loaded atomic.Int64
	var stop atomic.Bool
	done := make(chan error, 1)
	go func() {
		for i := 0; ; i++ {
			if stop.Load() {
				done <- nil
				return
			}
			sql := fmt.Sprintf("INSERT INTO t SELECT g, repeat('x', 2000) FROM generate_series(%d, %d) g", i*500, i*500+499)
			if _, err := loader.Exec(ctx, sql); err != nil {
				done <- err
				return
			}
			loaded.Add(500)
		}
	}()
	for {
		if _, stalled := p.Engine.Store().WriteStalled(); stalled {
			stop.Store(true)
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the loader ended before the store stalled: %v", err)
		case <-time.After(time.Millisecond):
		}
	}
	exec(t, c, "SET statement_timeout = 200")
	start := time.Now()
	pe := wantCode(t, c, "INSERT INTO u VALUES (-1, 'never')", "57014")
	if !strings.Contains(pe.Detail, "not taking writes") || time.Since(start) > 5*time.Second {
		t.Errorf("after %v: %q (detail %q)", time.Since(start), pe.Message, pe.Detail)
	}
	faults.On.Store(false)
	if err := <-done; err != nil {
		t.Fatalf("the load that met the stall: %v", err)
	}
	exec(t, c, "SET statement_timeout = 0")
	want := fmt.Sprint(loaded.Load())
	if got := queryStrings(t, c, "SELECT count(*) FROM t"); !slices.Equal(got, []string{want}) {
		t.Fatalf("after the stall: %q rows, want %s acknowledged", got, want)
	}
	if got := queryStrings(t, c, "SELECT count(*) FROM u"); !slices.Equal(got, []string{"0"}) {
		t.Fatalf("the INSERT that timed out was applied: %q", got)
	}
}
