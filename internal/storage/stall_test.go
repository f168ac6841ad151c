package storage

import (
	"bytes"
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"github.com/sluice-db/sluice/internal/storage/storagetest"

	"github.com/sluice-db/sluice/internal/sqlerr"
)

// TestStalledStoreHonoursContext: while every sstable write fails, the
// append that met Pebble's write stall waits for the disk, but later
// appends wait outside Pebble and end with their context, saying why and
// writing nothing; once the disk works again the stalled append and new
// ones succeed, and the log holds exactly the acknowledged records.
func TestStalledStoreHonoursContext(t *testing.T) {
	ctx := context.Background()
	faults := &storagetest.FailingFiles{Suffix: ".sst"}
	s, err := Open(ctx, Options{FS: errorfs.Wrap(vfs.NewMem(), faults), Dir: "db"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	faults.On.Store(true)
	payload := bytes.Repeat([]byte{'x'}, 3<<10) // inline, below segmentFrom
	var acked atomic.Int64
	var stop atomic.Bool
	stuck := make(chan error, 1)
	go func() {
		for !stop.Load() {
			if _, err := s.AppendDML(ctx, 1, payload); err != nil {
				stuck <- err
				return
			}
			acked.Add(1)
		}
		stuck <- nil
	}()
	deadline := time.Now().Add(30 * time.Second)
	for s.stall.stalled() == nil {
		if time.Now().After(deadline) {
			t.Fatal("the store never stalled")
		}
		time.Sleep(time.Millisecond)
	}
	stop.Store(true)
	// The writer above may be inside Pebble; these must not be.
	for range 3 {
		tctx, cancel := context.WithTimeoutCause(ctx, 50*time.Millisecond,
			sqlerr.New(sqlerr.QueryCanceled, "canceling statement due to statement timeout"))
		start := time.Now()
		_, err := s.AppendDML(tctx, 1, []byte("never"))
		cancel()
		e, ok := sqlerr.As(err)
		if !ok || e.Code != sqlerr.QueryCanceled || !strings.Contains(e.Detail, "not taking writes") {
			t.Fatalf("an append during the stall: %v, want 57014 with a detail", err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("an append during the stall took %v to honour a 50 ms timeout", d)
		}
	}
	faults.On.Store(false)
	select {
	case err := <-stuck:
		if err != nil {
			t.Fatalf("the stalled append: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the stalled append did not finish once the disk worked")
	}
	if _, err := s.AppendDML(ctx, 1, payload); err != nil {
		t.Fatalf("an append after the stall: %v", err)
	}
	acked.Add(1)
	recs, err := s.ReadDML(1, 1, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if string(r.Payload) == "never" {
			t.Fatal("a timed-out append was written")
		}
	}
	if int64(len(recs)) != acked.Load() {
		t.Fatalf("%d records in the log, %d acknowledged", len(recs), acked.Load())
	}
}

// TestStallDetailOnlyWhileStalled: a statement cancelled while the store
// stalls is told so; one cancelled after the stall ended (waiting for its
// turn behind another append) is not.
func TestStallDetailOnlyWhileStalled(t *testing.T) {
	s := &Store{}
	w := &s.stall
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w.begin("memtable count limit reached")
	if e, ok := sqlerr.As(w.canceled(ctx)); !ok || !strings.Contains(e.Detail, "memtable count limit") {
		t.Fatalf("during the stall: %v", e)
	}
	w.end()
	if e, ok := sqlerr.As(w.canceled(ctx)); !ok || e.Code != sqlerr.QueryCanceled || e.Detail != "" {
		t.Fatalf("after the stall: %+v", e)
	}
	if _, stalled := s.WriteStalled(); stalled {
		t.Fatal("WriteStalled after the stall ended")
	}
}
