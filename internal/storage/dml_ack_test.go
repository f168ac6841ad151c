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
