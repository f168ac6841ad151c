package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/types"
)

// TestSparsePiecesAreReadFromTheirSegments: a bulk statement's pieces of a
// table keyed by its hidden row id keep the span of every sparseSpans-th
// row alone; until their epoch commits, a scan of the table's latest state
// and a read of each row by its row id find every row, with its values,
// in the pieces' segments.
func TestSparsePiecesAreReadFromTheirSegments(t *testing.T) {
	defer func(n, m int) { sparseSpans, encodedFreshFrom = n, m }(sparseSpans, encodedFreshFrom)
	sparseSpans, encodedFreshFrom = 3, 1<<10
	ctx := context.Background()
	e, err := Open(ctx, Options{Dir: t.TempDir(), BarrierInterval: time.Hour, Parallelism: 2, ChunkSize: 64, Logger: testLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	cols := []catalog.Column{{Name: "k", Type: types.TInt64}, {Name: "v", Type: types.TVarchar}}
	rel, err := e.CreateTable(ctx, TableSpec{Name: "t", Columns: cols})
	if err != nil {
		t.Fatal(err)
	}
	// Some values are NULL, some long enough for a two-byte length, and
	// a few far longer than a segment stretch (segmentRow steps over them).
	value := func(k int64) types.Datum {
		switch {
		case k%11 == 3:
			return nil
		case k%97 == 5:
			return strings.Repeat("w", 70<<10)
		}
		return fmt.Sprintf("row %d, long enough for a piece of kilobytes%s", k, strings.Repeat("x", int(k%5)*60))
	}
	const rows, pieceRows = 500, 100
	var pieces []*Prepared
	for lo := int64(0); lo < rows; lo += pieceRows {
		b := types.NewBuilder([]types.Type{types.TInt64, types.TVarchar}, pieceRows+1)
		for k := lo; k < lo+pieceRows; k++ {
			b.Append(types.Insert, types.Row{k, value(k)})
		}
		p, err := e.Prepare(ctx, rel, b.Take())
		if err != nil {
			t.Fatal(err)
		}
		if p.KeepsRows() || p.write.Encoded == nil || p.write.Encoded.Every != sparseSpans {
			t.Fatalf("a piece of %d rows is not kept sparse in its segment", pieceRows)
		}
		pieces = append(pieces, p)
	}
	tw, err := e.LockTable(ctx, rel)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pieces {
		if err := tw.StagePrepared(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Commit(ctx, tw); err != nil {
		t.Fatal(err)
	}
	tw.Close()
	sn, err := e.LatestSnapshot(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	defer sn.Close()
	desc := storage.TableDesc(rel.Table)
	it, err := sn.ScanTable(ctx, desc)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	seen := 0
	for {
		row, ok, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		k := row[0].(int64)
		if row[1] != value(k) {
			t.Fatalf("scan: row %d holds %q", k, row[1])
		}
		got, found, err := sn.Get(ctx, desc, types.Row{row[2]})
		if err != nil || !found || got[0] != k || got[1] != value(k) {
			t.Fatalf("Get of row id %v (k %d): %v %v %v", row[2], k, got, found, err)
		}
		seen++
	}
	if seen != rows {
		t.Fatalf("scan found %d rows, want %d", seen, rows)
	}
}
