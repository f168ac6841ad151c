package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// TestKeyMoveAcrossActors updates rows so that their join key and group key
// change, with four actors per fragment. Each update pair is split by the
// hash exchange into a delete on the old key's actor and an insert on the
// new key's; the two halves then reach the view's materialize through
// different channels, in either order. The views are right only because
// their stream keys include the exchange keys (see keyed), so the two
// halves are different rows of the view.
func TestKeyMoveAcrossActors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	m := openPropModel(t, ctx, Options{Parallelism: 4, ChunkSize: 4})
	defer func() { must(t, m.e.Close()) }()
	e := m.e
	m.create(t, ctx, viewShape{name: "lj", build: func(b *builder, a, bt *catalog.Relation, _ map[string]*catalog.Relation) *plan.Node {
		return keyed(b.join(leftJoin, b.scan(a), b.scan(bt), []int{0}, []int{0}))
	}})
	m.create(t, ctx, viewShape{name: "gtop", build: func(b *builder, a, _ *catalog.Relation, _ map[string]*catalog.Relation) *plan.Node {
		return keyed(b.topN(b.scan(a), []int{0}, []plan.ColumnOrder{{Column: 1, Order: codec.Order{Desc: true}}}, 3, 0))
	}})
	i2 := []types.Type{types.TInt64, types.TInt64}
	var rows strings.Builder
	for i := range 64 {
		fmt.Fprintf(&rows, "+ %d %d\n", i%16, i)
	}
	must(t, e.Write(ctx, "a", types.MustParseChunk(i2, rows.String())))
	must(t, e.Write(ctx, "b", types.MustParseChunk(i2, "+ 1 10\n+ 2 20\n+ 5 50")))
	must(t, e.Flush(ctx))
	at := m.a.Table.Types
	// Move every row to another key a few times within one epoch and
	// across epochs: k -> NULL -> k+1 -> ...
	for round := range 4 {
		cur, err := e.Scan(ctx, "a")
		must(t, err)
		var ch strings.Builder
		for _, r := range cur {
			nr := append(types.Row(nil), r...)
			if r[0] == nil {
				nr[0] = int64(round)
			} else {
				nr[0] = nil
			}
			mid := append(types.Row(nil), nr...)
			nr2 := append(types.Row(nil), r...)
			if r[0] != nil {
				nr2[0] = (r[0].(int64) + 1) % 16
			}
			fmt.Fprintf(&ch, "U- %s\nU+ %s\nU- %s\nU+ %s\n", types.FormatRow(r, at), types.FormatRow(mid, at),
				types.FormatRow(mid, at), types.FormatRow(nr2, at))
		}
		must(t, e.Write(ctx, "a", types.MustParseChunk(at, ch.String())))
		m.check(t, ctx, round)
	}
}
