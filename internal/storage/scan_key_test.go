package storage

import (
	"context"
	"slices"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/sluice-db/sluice/internal/types"
)

// TestScanKeySharesThePool: ScanKey reads what Scan reads, committed rows
// and uncommitted writes alike, through a pooled iterator, and gives it
// back unbounded: a point read after it finds keys outside the scan's
// range (a pooled iterator keeping the scan's bounds answered "absent").
func TestScanKeySharesThePool(t *testing.T) {
	ctx := context.Background()
	s := openIngest(t, vfs.NewMem(), -1)
	tbl := mustOpenTable(t, s, kvDesc(1), 1, nil)
	for k := range int64(5) {
		if err := tbl.Insert(types.Row{k, "a", k * 10}); err != nil {
			t.Fatal(err)
		}
	}
	if err := tbl.Seal(1); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(ctx, 1, nil); err != nil {
		t.Fatal(err)
	}
	if err := tbl.Insert(types.Row{int64(2), "b", int64(99)}); err != nil { // uncommitted
		t.Fatal(err)
	}
	read := func(scan func(context.Context, types.Row) (Iterator, error)) []string {
		it, err := scan(ctx, types.Row{int64(2)})
		if err != nil {
			t.Fatal(err)
		}
		defer it.Close()
		var out []string
		for {
			row, ok, err := it.Next()
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				return out
			}
			out = append(out, types.FormatRow(row, kvDesc(1).Types))
		}
	}
	for range 3 { // the same pooled iterator, again and again
		if got, want := read(tbl.ScanKey), read(tbl.Scan); !slices.Equal(got, want) || len(got) != 2 {
			t.Fatalf("ScanKey %v, Scan %v", got, want)
		}
		for k := range int64(5) {
			if row, ok, err := tbl.Get(ctx, types.Row{k, "a"}); err != nil || !ok || row[2] != k*10 {
				t.Fatalf("Get(%d) after a scan: %v, %v, %v", k, row, ok, err)
			}
		}
	}
}
