package storage

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/sluice-db/sluice/internal/types"
)

// TestDeleteBetweenDeletesNothingOnError: when the visitor fails, or the
// context ends, during the walk, DeleteBetween returns the error and
// deletes none of the rows, committed or not; the table still works.
func TestDeleteBetweenDeletesNothingOnError(t *testing.T) {
	ctx := context.Background()
	s := openMem(t, nil)
	tbl := mustOpenTable(t, s, kvDesc(9), 1, nil)
	for k := range int64(3000) {
		if err := tbl.Insert(types.Row{k % 50, fmt.Sprint(k), k}); err != nil {
			t.Fatal(err)
		}
		if k == 1500 { // half committed, half not
			if err := tbl.Seal(1); err != nil {
				t.Fatal(err)
			}
			if err := s.Commit(ctx, 1, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	before := len(scanAll(t, tbl, nil))
	stop := errors.New("stop")
	seen := 0
	err := tbl.DeleteBetween(ctx, nil, int64(40), func(types.Row) error {
		if seen++; seen == 30 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) {
		t.Fatalf("visitor's error: got %v", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	err = tbl.DeleteBetween(cancelled, nil, int64(40), func(types.Row) error {
		cancel() // the walk checks the context every 1 024 rows
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled walk: got %v", err)
	}
	if after := len(scanAll(t, tbl, nil)); after != before {
		t.Fatalf("%d rows after failed deletes, want %d", after, before)
	}
	if err := tbl.DeleteBetween(ctx, nil, int64(40), nil); err != nil {
		t.Fatal(err)
	}
	for _, r := range scanAll(t, tbl, nil) {
		if r[0].(int64) < 40 {
			t.Fatalf("row %v below the bound survived", r)
		}
	}
}
