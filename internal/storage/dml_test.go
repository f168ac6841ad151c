package storage

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

func TestDMLAppendReadTruncate(t *testing.T) {
	ctx := context.Background()
	s := openMem(t, nil)
	for i := 1; i <= 5; i++ {
		seq, err := s.AppendDML(ctx, 9, fmt.Appendf(nil, "p%d", i))
		if err != nil || seq != uint64(i) {
			t.Fatalf("append %d: seq %d, %v", i, seq, err)
		}
	}
	recs, err := s.ReadDML(9, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[0].Seq != 2 || string(recs[1].Payload) != "p3" {
		t.Fatalf("read = %v", recs)
	}
	if other, _ := s.ReadDML(10, 1, 10); len(other) != 0 {
		t.Fatalf("table 10 sees table 9's log: %v", other)
	}
	if err := s.TruncateDML(ctx, 9, 5); err != nil {
		t.Fatal(err)
	}
	if recs, _ := s.ReadDML(9, 1, 10); len(recs) != 0 {
		t.Fatalf("after truncate: %v", recs)
	}
	// Sequence numbers are not reused after the log empties, even across a
	// restart.
	seq, err := s.AppendDML(ctx, 9, []byte("p6"))
	if err != nil || seq != 6 {
		t.Fatalf("append after truncate: %d, %v", seq, err)
	}
	if err := s.TruncateDML(ctx, 9, 6); err != nil {
		t.Fatal(err)
	}
}

func TestDMLSeqSurvivesReopenAfterTruncate(t *testing.T) {
	ctx := context.Background()
	mem := newMemFS()
	s := openMem(t, mem)
	for range 3 {
		if _, err := s.AppendDML(ctx, 1, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.TruncateDML(ctx, 1, 3); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := openMem(t, mem)
	seq, err := s2.AppendDML(ctx, 1, []byte("y"))
	if err != nil || seq != 4 {
		t.Fatalf("seq after reopen = %d,%v; want 4", seq, err)
	}
}

// TestDMLConcurrentAppendersTail runs appenders concurrently with a tailing
// reader that must see every record exactly once, in seq order, no gaps.
func TestDMLConcurrentAppendersTail(t *testing.T) {
	ctx := context.Background()
	s := openMem(t, nil)
	const writers, each = 4, 50
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if _, err := s.AppendDML(ctx, 2, fmt.Appendf(nil, "%d-%d", w, i)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	seen := map[string]bool{}
	next := uint64(1)
	tctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	for len(seen) < writers*each {
		if err := s.WaitDML(tctx, 2, next-1); err != nil {
			t.Fatalf("wait after %d records: %v", len(seen), err)
		}
		recs, err := s.ReadDML(2, next, 16)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if r.Seq != next {
				t.Fatalf("gap: got seq %d, want %d", r.Seq, next)
			}
			if seen[string(r.Payload)] {
				t.Fatalf("duplicate %q", r.Payload)
			}
			seen[string(r.Payload)] = true
			next++
		}
	}
	wg.Wait()
}

func TestWaitDMLCancel(t *testing.T) {
	s := openMem(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := s.WaitDML(ctx, 5, 0); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitDML on empty log = %v, want deadline exceeded", err)
	}
}
