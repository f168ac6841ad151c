package storage

import (
	"context"
	"sync"
	"testing"

	"github.com/sluice-db/sluice/internal/types"
)

// whileCommitting runs step for epochs 1..n on a goroutine of its own and
// calls read, on the test's goroutine, until the last step is done.
func whileCommitting(t *testing.T, n uint64, step func(e uint64) error, read func(reads int)) {
	t.Helper()
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(done)
		for e := uint64(1); e <= n; e++ {
			if err := step(e); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	reads := 0
	for stop := false; !stop; reads++ {
		select {
		case <-done:
			stop = true
		default:
		}
		read(reads)
	}
	wg.Wait()
	t.Logf("%d reads over %d commits", reads, n)
}

// TestSnapshotEpochMatchesMarker takes snapshots while epochs commit and
// checks that the epoch each one reports is the marker it holds, so that
// snapshotAt's shortcut never labels a snapshot with an epoch it does not
// hold (or lacks one it does).
func TestSnapshotEpochMatchesMarker(t *testing.T) {
	ctx := context.Background()
	s := openMem(t, nil)
	tbl := mustOpenTable(t, s, kvDesc(1), 1, nil)
	commit := func(e uint64) error {
		if err := tbl.Insert(types.Row{int64(e), "x", int64(e)}); err != nil {
			return err
		}
		if err := tbl.Seal(e); err != nil {
			return err
		}
		return s.Commit(ctx, e, nil)
	}
	whileCommitting(t, 300, commit, func(int) {
		for _, latest := range []bool{false, true} {
			sn, err := s.Snapshot()
			if latest {
				sn, err = s.LatestSnapshot(ctx, false)
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
	})
}
