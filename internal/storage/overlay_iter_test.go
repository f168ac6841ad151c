package storage

import (
	"context"
	"testing"

	"github.com/sluice-db/sluice/internal/types"
)

// A Seal and a Commit while a scan is open move the unsealed writes into a
// run and commit them; the scan must still see every row that existed when
// it started (the overlay hands them over between its batched reads).
func TestScanSurvivesSealAndCommit(t *testing.T) {
	ctx := context.Background()
	s := openMem(t, nil)
	tbl := mustOpenTable(t, s, kvDesc(3), 1, nil)
	const n = 300 // several overlay batches
	for i := range n {
		if err := tbl.Insert(types.Row{int64(i), "x", int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	it, err := tbl.Scan(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	seen := map[int64]bool{}
	for i := 0; ; i++ {
		row, ok, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		seen[row[0].(int64)] = true
		if i == 10 {
			if err := tbl.Seal(1); err != nil {
				t.Fatal(err)
			}
			if err := s.Commit(ctx, 1, nil); err != nil {
				t.Fatal(err)
			}
			// Writes of the next epoch; the scan may or may not see them.
			if err := tbl.Insert(types.Row{int64(n + 1), "y", int64(0)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := range int64(n) {
		if !seen[i] {
			t.Fatalf("scan lost row %d after a seal and commit mid-scan (saw %d rows)", i, len(seen))
		}
	}
}
