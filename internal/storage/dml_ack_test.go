package storage

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

// TestAppendAcknowledgesOnlyDurableSeqs: once AppendDML returns seq s,
// LastDML is at least s, even with concurrent appenders — FLUSH relies on
// it to include every acknowledged write.
func TestAppendAcknowledgesOnlyDurableSeqs(t *testing.T) {
	ctx := context.Background()
	s := openMem(t, nil)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				seq, err := s.AppendDML(ctx, 7, []byte("x"))
				if err != nil {
					errs <- err
					return
				}
				last, err := s.LastDML(7)
				if err != nil {
					errs <- err
					return
				}
				if last < seq {
					errs <- fmt.Errorf("append acknowledged seq %d while LastDML was %d", seq, last)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// Appenders finished by a later batch's sync leave nothing behind.
	s.dml.mu.Lock()
	defer s.dml.mu.Unlock()
	if tb := s.dml.mu.tables[7]; tb.durable != 8*200 || len(tb.done) != 0 {
		t.Fatalf("durable %d, %d finished seqs above it; want 1600 and none", tb.durable, len(tb.done))
	}
}

// TestFinishDMLThrough: a synced batch's seq finishes every seq below it,
// however the appenders before it are scheduled; a finish below the mark
// changes nothing.
func TestFinishDMLThrough(t *testing.T) {
	s := openMem(t, nil)
	s.dml.mu.Lock()
	defer s.dml.mu.Unlock()
	tb, err := s.dmlTableLocked(9)
	if err != nil {
		t.Fatal(err)
	}
	ch := tb.changed
	s.finishDMLLocked(9, tb, 3, false) // failed, above a gap
	if tb.durable != 0 || len(tb.done) != 1 {
		t.Fatalf("durable %d, done %v after a failed seq 3", tb.durable, tb.done)
	}
	s.finishDMLLocked(9, tb, 5, true)
	if tb.durable != 5 || len(tb.done) != 0 {
		t.Fatalf("durable %d, done %v after synced seq 5; want 5 and none", tb.durable, tb.done)
	}
	select {
	case <-ch:
	default:
		t.Fatal("the watermark advanced without waking its waiters")
	}
	ch = tb.changed
	s.finishDMLLocked(9, tb, 4, true) // its appender, scheduled late
	if tb.durable != 5 || len(tb.done) != 0 {
		t.Fatalf("durable %d, done %v after a late seq 4", tb.durable, tb.done)
	}
	select {
	case <-ch:
		t.Fatal("waiters woken though the watermark did not move")
	default:
	}
	s.finishDMLLocked(9, tb, 7, false)
	s.finishDMLLocked(9, tb, 6, true)
	if tb.durable != 7 || len(tb.done) != 0 {
		t.Fatalf("durable %d, done %v; want 7 and none", tb.durable, tb.done)
	}
}
