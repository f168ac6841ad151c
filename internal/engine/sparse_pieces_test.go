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
	ctx := context.Background()
	e, rel, pieces := openSparsePieces(t)
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
	checkSparseRows(t, sn, storage.TableDesc(rel.Table))
}

// checkSparseRows scans desc in sn and reads each row by its row id: the
// rows of prepareSparsePieces, each with its value.
func checkSparseRows(t *testing.T, sn *storage.Snapshot, desc storage.TableDesc) {
	t.Helper()
	ctx := context.Background()
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
		if row[1] != sparseValue(k) {
			t.Fatalf("scan: row %d holds %q", k, row[1])
		}
		got, found, err := sn.Get(ctx, desc, types.Row{row[2]})
		if err != nil || !found || got[0] != k || got[1] != sparseValue(k) {
			t.Fatalf("Get of row id %v (k %d): %v %v %v", row[2], k, got, found, err)
		}
		seen++
	}
	if seen != sparseRows {
		t.Fatalf("scan found %d rows, want %d", seen, sparseRows)
	}
}

const sparseRows, sparsePieceRows = 500, 100

// sparseValue is row k's value: some NULL, some long enough for a two-byte
// length, and a few far longer than a segment stretch (segmentRow steps
// over them).
func sparseValue(k int64) types.Datum {
	switch {
	case k%11 == 3:
		return nil
	case k%97 == 5:
		return strings.Repeat("w", 70<<10)
	}
	return fmt.Sprintf("row %d, long enough for a piece of kilobytes%s", k, strings.Repeat("x", int(k%5)*60))
}

// prepareSparsePieces creates table t (k bigint, v varchar) in e and
// prepares rows k 0..sparseRows-1 in pieces of sparsePieceRows, each kept
// sparse in its segment.
func prepareSparsePieces(t *testing.T, e *Engine) (*catalog.Relation, []*Prepared) {
	t.Helper()
	cols := []catalog.Column{{Name: "k", Type: types.TInt64}, {Name: "v", Type: types.TVarchar}}
	rel, err := e.CreateTable(context.Background(), TableSpec{Name: "t", Columns: cols})
	if err != nil {
		t.Fatal(err)
	}
	return rel, prepareSparsePiecesOf(t, e, rel)
}

// prepareSparsePiecesOf prepares prepareSparsePieces's rows for rel.
func prepareSparsePiecesOf(t *testing.T, e *Engine, rel *catalog.Relation) []*Prepared {
	t.Helper()
	ctx := context.Background()
	var pieces []*Prepared
	for lo := int64(0); lo < sparseRows; lo += sparsePieceRows {
		b := types.NewBuilder([]types.Type{types.TInt64, types.TVarchar}, sparsePieceRows+1)
		for k := lo; k < lo+sparsePieceRows; k++ {
			b.Append(types.Insert, types.Row{k, sparseValue(k)})
		}
		p, err := e.Prepare(ctx, rel, b.Take(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if p.KeepsRows() || p.write.Encoded == nil || p.write.Encoded.Every != sparseSpans {
			t.Fatalf("a piece of %d rows is not kept sparse in its segment", sparsePieceRows)
		}
		pieces = append(pieces, p)
	}
	return pieces
}

// TestBlockKeepsPiecesInTheirSegments: a transaction block keeps a bulk
// statement's pieces in their segments; its own reads find every row
// there, nobody else's does; ROLLBACK removes the segments, and COMMIT
// writes the pieces as they are.
func TestBlockKeepsPiecesInTheirSegments(t *testing.T) {
	ctx := context.Background()
	e, rel, pieces := openSparsePieces(t)
	desc := storage.TableDesc(rel.Table)
	stage := func(pieces []*Prepared) *Txn {
		txn := e.Begin()
		w, err := txn.Writer(ctx, rel)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		for _, p := range pieces {
			if err := w.StagePrepared(p); err != nil {
				t.Fatal(err)
			}
		}
		return txn
	}
	latest := func(txn *Txn) *storage.Snapshot {
		sn, err := e.LatestSnapshot(ctx, false)
		if err != nil {
			t.Fatal(err)
		}
		if txn != nil {
			if err := txn.Overlay(sn); err != nil {
				t.Fatal(err)
			}
		}
		return sn
	}
	txn := stage(pieces)
	sn := latest(txn)
	checkSparseRows(t, sn, desc)
	_ = sn.Close()
	sn = latest(nil)
	if _, found, err := sn.Get(ctx, desc, types.Row{int64(1)}); found || err != nil {
		t.Fatalf("another reader sees the block's rows: %v %v", found, err)
	}
	_ = sn.Close()
	txn.Rollback()
	for _, p := range pieces {
		if _, err := e.store.ReadSegment(p.write.Segment); err == nil {
			t.Fatalf("segment %s is left after ROLLBACK", p.write.Segment)
		}
	}

	pieces = prepareSparsePiecesOf(t, e, rel)
	txn = stage(pieces)
	if _, err := txn.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	sn = latest(nil)
	defer sn.Close()
	checkSparseRows(t, sn, desc)
}

// openSparsePieces opens an engine whose bulk pieces go to segments kept
// sparse (a span every 3 rows), until the test ends, and prepares the
// pieces of prepareSparsePieces.
func openSparsePieces(t *testing.T) (*Engine, *catalog.Relation, []*Prepared) {
	t.Helper()
	n, m := sparseSpans, encodedFreshFrom
	sparseSpans, encodedFreshFrom = 3, 1<<10
	e, err := Open(context.Background(), Options{Dir: t.TempDir(), BarrierInterval: time.Hour, Parallelism: 2, ChunkSize: 64, Logger: testLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = e.Close()
		sparseSpans, encodedFreshFrom = n, m
	})
	rel, pieces := prepareSparsePieces(t, e)
	return e, rel, pieces
}
