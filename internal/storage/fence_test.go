package storage

import (
	"context"
	"errors"
	"testing"

	"github.com/sluice-db/sluice/internal/types"
)

// A fenced actor (dropped, maybe still running) can stage nothing more:
// its later writes never reach a commit. Other actors are untouched, and a
// recovery lifts the fence.
func TestFenceAndDiscardRefusesLaterWrites(t *testing.T) {
	ctx := context.Background()
	s := openMem(t, nil)
	doomed := mustOpenTable(t, s, kvDesc(1), 1, nil)
	other := mustOpenTable(t, s, kvDesc(2), 2, nil)
	for _, tbl := range []*StateTable{doomed, other} {
		if err := tbl.Insert(types.Row{int64(1), "x", int64(1)}); err != nil {
			t.Fatal(err)
		}
		if err := tbl.Seal(1); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.FenceAndDiscard(1); n != 1 {
		t.Fatalf("discarded %d batches, want 1", n)
	}
	if err := doomed.Insert(types.Row{int64(2), "late", int64(2)}); err != nil {
		t.Fatal(err)
	}
	if err := doomed.Seal(2); !errors.Is(err, ErrActorFenced) {
		t.Fatalf("seal after the fence: %v, want ErrActorFenced", err)
	}
	if err := other.Insert(types.Row{int64(2), "y", int64(2)}); err != nil {
		t.Fatal(err)
	}
	if err := other.Seal(2); err != nil {
		t.Fatal(err)
	}
	for e := uint64(1); e <= 2; e++ {
		if err := s.Commit(ctx, e, nil); err != nil {
			t.Fatal(err)
		}
	}
	if n, _ := s.TableKeyCount(1); n != 0 {
		t.Fatalf("fenced actor's table has %d keys", n)
	}
	if n, _ := s.TableKeyCount(2); n != 2 {
		t.Fatalf("other actor's table has %d keys, want 2", n)
	}
	s.AbortUncommitted()
	again := mustOpenTable(t, s, kvDesc(1), 1, nil)
	if err := again.Insert(types.Row{int64(3), "z", int64(3)}); err != nil {
		t.Fatal(err)
	}
	if err := again.Seal(3); err != nil {
		t.Fatalf("seal after a recovery: %v", err)
	}
}
