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
}
