package storage

import (
	"context"
	"sync"
	"testing"

	"github.com/sluice-db/sluice/internal/types"
)

// TestSnapshotEpochMatchesMarker takes snapshots while epochs commit and
// checks that the epoch each one reports is the marker it holds, so that
// snapshotAt's shortcut never labels a snapshot with an epoch it does not
// hold (or lacks one it does).
func TestSnapshotEpochMatchesMarker(t *testing.T) {
	ctx := context.Background()
	s := openMem(t, nil)
	tbl := mustOpenTable(t, s, kvDesc(1), 1, nil)
	const epochs = 300
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(done)
		for e := uint64(1); e <= epochs; e++ {
			if err := tbl.Insert(types.Row{int64(e), "x", int64(e)}); err != nil {
				t.Error(err)
				return
			}
			if err := tbl.Seal(e); err != nil {
				t.Error(err)
				return
			}
			if err := s.Commit(ctx, e, nil); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	checks := 0
	for stop := false; !stop; checks++ {
		select {
		case <-done:
			stop = true
		default:
		}
		for _, latest := range []bool{false, true} {
			var sn *Snapshot
			var err error
			if latest {
				sn, err = s.LatestSnapshot(ctx, false)
			} else {
				sn, err = s.Snapshot()
			}
			if err != nil {
				t.Fatal(err)
			}
			marker, err := readEpoch(sn.snap)
			if err != nil {
				t.Fatal(err)
			}
			if sn.Epoch() != marker {
				t.Fatalf("snapshot (latest %v) reports epoch %d but holds marker %d", latest, sn.Epoch(), marker)
			}
			_ = sn.Close()
		}
	}
	wg.Wait()
	t.Logf("%d checks over %d commits", checks, epochs)
}
