package session

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// TestSortedPiecesFindEveryRepeatedKey: a bulk statement into a table
// keyed by one bigint, cut into pieces that may rise one after another,
// overlap or repeat a key within a piece or across pieces: each piece,
// sorted (sortPiece), holds the rows it was given in rising key order
// with their values, and intKeys fails with 23505 exactly when a key
// repeats (at once when the repeat is within one piece).
func TestSortedPiecesFindEveryRepeatedKey(t *testing.T) {
	rel := &catalog.Relation{Name: "t", PK: []int{1},
		Columns: []catalog.Column{{Name: "v", Type: types.TVarchar}, {Name: "id", Type: types.TInt64, NotNull: true}}}
	rapid.Check(t, func(rt *rapid.T) {
		keys, sortBy := newStatementKeys(rel)
		if sortBy != 1 {
			rt.Fatalf("sort column %d, want 1", sortBy)
		}
		seen, repeated := map[int64]bool{}, false
		base := int64(0)
		var err error
		for p := range rapid.IntRange(1, 5).Draw(rt, "pieces") {
			ids := rapid.SliceOfN(rapid.Int64Range(0, 40), 1, 30).Draw(rt, fmt.Sprint("ids", p))
			if rapid.Bool().Draw(rt, fmt.Sprint("after", p)) {
				for i := range ids {
					ids[i] += base // above every earlier piece's keys
				}
			}
			b := types.NewBuilder([]types.Type{types.TVarchar, types.TInt64}, len(ids)+1)
			for _, id := range ids {
				b.Append(types.Insert, types.Row{fmt.Sprint("row ", id), id})
				repeated = repeated || seen[id]
				seen[id] = true
				base = max(base, id+41)
			}
			in := b.Take()
			c := sortPiece(in, sortBy)
			got := make([]int64, 0, len(ids))
			for i := range c.Capacity() {
				r := c.Row(i)
				if c.Op(i) != types.Insert || r[0] != fmt.Sprint("row ", r[1]) {
					rt.Fatalf("sorted row %d: %v %v", i, c.Op(i), r)
				}
				got = append(got, r[1].(int64))
			}
			want := slices.Sorted(slices.Values(ids))
			if !slices.Equal(got, want) {
				rt.Fatalf("sorted piece %v, want %v", got, want)
			}
			if err = keys.propose(context.Background(), c); err != nil {
				break // a repeat within a sorted piece is found at once
			}
		}
		if err == nil {
			err = keys.finish()
		}
		if code := sqlerr.CodeOf(err); repeated != (err != nil) || err != nil && code != "23505" {
			rt.Fatalf("finish: %v (%s), a key repeated: %v", err, code, repeated)
		}
	})
}
