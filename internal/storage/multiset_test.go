package storage

import (
	"context"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"pgregory.net/rapid"

	"github.com/sluice-db/sluice/internal/types"
)

// TestAddCountMatchesModel drives AddCount with random deltas over a few
// keys, sealing and committing at random points, and checks every answer,
// every read of the table and the committed state after reopening against
// a map of counts, with seals through batches only or through files too.
// uncommittedOnly is passed whenever the key has no committed row, as an
// aggregate does for a new group.
func TestAddCountMatchesModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		ctx := context.Background()
		// IngestFrom 1: every seal's fresh keys go to a file (ingest_items.go).
		ingestFrom := rapid.SampledFrom([]int{-1, 1}).Draw(rt, "ingestFrom")
		s := openIngest(t, vfs.NewMem(), ingestFrom)
		tbl := mustOpenTable(t, s, kvDesc(1), 1, nil)
		model := map[[2]any]int64{}     // present iff > 0
		committed := map[[2]any]int64{} // as of the last commit
		var epoch, sealed uint64
		for range rapid.IntRange(1, 60).Draw(rt, "steps") {
			switch rapid.IntRange(0, 9).Draw(rt, "op") {
			case 0: // seal; commit everything sealed
				epoch++
				if err := tbl.Seal(epoch); err != nil {
					rt.Fatal(err)
				}
				if rapid.Bool().Draw(rt, "commit") {
					if err := s.Commit(ctx, epoch, nil); err != nil {
						rt.Fatal(err)
					}
					sealed = epoch
					committed = clonedCounts(model)
				}
			default:
				k := [2]any{int64(rapid.IntRange(0, 3).Draw(rt, "k")), rapid.SampledFrom([]string{"a", "b"}).Draw(rt, "name")}
				delta := int64(rapid.IntRange(-2, 3).Draw(rt, "delta"))
				_, inCommitted := committed[k]
				before, after, err := tbl.AddCount(ctx, types.Row{k[0], k[1]}, delta, !inCommitted && sealed == epoch)
				if err != nil {
					rt.Fatal(err)
				}
				want := model[k]
				if next := want + delta; next > 0 {
					model[k] = next
				} else {
					delete(model, k)
				}
				if before != want || after != model[k] {
					rt.Fatalf("AddCount(%v, %d) = %d, %d; want %d, %d", k, delta, before, after, want, model[k])
				}
				checkCount(rt, tbl, k, model[k])
			}
		}
		epoch++
		if err := tbl.Seal(epoch); err != nil {
			rt.Fatal(err)
		}
		if err := s.Commit(ctx, epoch, nil); err != nil {
			rt.Fatal(err)
		}
		fresh := mustOpenTable(t, s, kvDesc(1), 2, nil)
		rows := scanAll(t, fresh, nil)
		if len(rows) != len(model) {
			rt.Fatalf("committed %d rows %v, want %d %v", len(rows), rows, len(model), model)
		}
		for _, r := range rows {
			if n := model[[2]any{r[0], r[1]}]; r[2] != n {
				rt.Fatalf("committed row %v, want count %d", r, n)
			}
		}
	})
}

func clonedCounts(m map[[2]any]int64) map[[2]any]int64 {
	c := make(map[[2]any]int64, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// checkCount reads k through Get: absent when n is 0, else with count n.
func checkCount(rt *rapid.T, tbl *StateTable, k [2]any, n int64) {
	row, ok, err := tbl.Get(context.Background(), types.Row{k[0], k[1]})
	if err != nil {
		rt.Fatal(err)
	}
	if ok != (n > 0) || ok && row[2] != n {
		rt.Fatalf("Get(%v) = %v, %v; want count %d", k, row, ok, n)
	}
}

// TestAddCountRefusesOtherShapes: a table whose last column is not a
// bigint count after its whole PK is not a multiset.
func TestAddCountRefusesOtherShapes(t *testing.T) {
	s := openMem(t, nil)
	d := kvDesc(1)
	d.PK, d.Orders = []int{0}, d.Orders[:1]
	tbl := mustOpenTable(t, s, d, 1, nil)
	if _, _, err := tbl.AddCount(context.Background(), types.Row{int64(1)}, 1, false); err == nil {
		t.Fatal("AddCount on a table of PK (k) and two more columns succeeded")
	}
}
