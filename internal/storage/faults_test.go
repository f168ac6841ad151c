package storage

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
)

// faultyFiles fails, at random and while on, the writes, syncs, creates,
// links and renames of every file but Pebble's WAL, MANIFEST, OPTIONS,
// markers and the store directory itself: a failed WAL write or directory
// sync is fatal to Pebble by design (the process must restart, which the
// crash tests cover, and the disk guard keeps ENOSPC away); everything
// else must fail cleanly.
type faultyFiles struct {
	on    atomic.Bool
	mu    sync.Mutex // Pebble's goroutines write files too
	rng   *rand.Rand
	p     float64
	fired atomic.Int64
}

func (f *faultyFiles) MaybeError(op errorfs.Op) error {
	if !f.on.Load() {
		return nil
	}
	base := op.Path[strings.LastIndex(op.Path, "/")+1:]
	if op.Path == "db" || strings.HasSuffix(base, ".log") || strings.HasPrefix(base, "MANIFEST") || strings.HasPrefix(base, "OPTIONS") ||
		strings.HasPrefix(base, "marker.") || base == "LOCK" {
		return nil
	}
	switch op.Kind {
	case errorfs.OpCreate, errorfs.OpLink, errorfs.OpRename, errorfs.OpFileWrite, errorfs.OpFileWriteAt,
		errorfs.OpFileSync, errorfs.OpFileSyncData, errorfs.OpFileSyncTo:
	default:
		return nil
	}
	f.mu.Lock()
	miss := f.rng.Float64() >= f.p
	f.mu.Unlock()
	if miss {
		return nil
	}
	f.fired.Add(1)
	return errorfs.ErrInjected
}

func (f *faultyFiles) String() string { return "faultyFiles" }

// TestInjectedFaultsLoseNothingAcknowledged: with writes of the store's
// own files (DML segments, the ACKNOWLEDGED count, Pebble's sstables)
// failing at random, DML appends and flushes fail or succeed but never
// panic, and after a crash every record whose append was acknowledged is
// there, byte for byte, and no other: an append that failed left nothing
// (and one whose ACKNOWLEDGED count could not be written still succeeded:
// it was committed).
func TestInjectedFaultsLoseNothingAcknowledged(t *testing.T) {
	defer func(n int) { segmentFrom = n }(segmentFrom)
	segmentFrom = 4 << 10 // every tenth record is a segment
	for seed := range uint64(4) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			ctx := context.Background()
			mem := vfs.NewCrashableMem()
			faults := &faultyFiles{rng: rand.New(rand.NewPCG(seed, 7)), p: 0.2}
			s, err := Open(ctx, Options{FS: errorfs.Wrap(mem, faults), Dir: "db"})
			if err != nil {
				t.Fatal(err)
			}
			faults.on.Store(true)
			r := rand.New(rand.NewPCG(seed, 9))
			acked := map[uint64][]byte{}
			failed := 0
			for i := range 400 {
				payload := bytes.Repeat([]byte{byte(i)}, 100+r.IntN(200))
				if i%10 == 0 {
					payload = bytes.Repeat([]byte{byte(i)}, 5<<10)
				}
				seq, err := s.AppendDML(ctx, 1, payload)
				if err != nil {
					failed++
					continue
				}
				acked[seq] = payload
				if i%50 == 49 {
					_ = s.db.Flush() // an sstable write may fail: Pebble retries it
				}
			}
			faults.on.Store(false)
			crashed := mem.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 50, RNG: rand.New(rand.NewPCG(seed, 3))})
			_ = s.Close()
			t.Logf("%d faults injected, %d appends failed, %d acknowledged", faults.fired.Load(), failed, len(acked))
			if faults.fired.Load() == 0 || len(acked) == 0 {
				t.Fatal("the test injected nothing or acknowledged nothing")
			}
			s2, err := Open(ctx, Options{FS: crashed, Dir: "db"})
			if err != nil {
				t.Fatalf("reopen after the faults and a crash: %v", err)
			}
			defer s2.Close()
			recs, err := s2.ReadDML(1, 1, 1000)
			if err != nil {
				t.Fatal(err)
			}
			got := map[uint64][]byte{}
			for _, rec := range recs {
				got[rec.Seq] = rec.Payload
			}
			if len(recs) != len(acked) {
				t.Errorf("%d records in the log, %d acknowledged: a failed append left one behind", len(recs), len(acked))
			}
			for seq, want := range acked {
				if !bytes.Equal(got[seq], want) {
					t.Fatalf("acknowledged record %d: got %d bytes, want %d", seq, len(got[seq]), len(want))
				}
			}
		})
	}
}
