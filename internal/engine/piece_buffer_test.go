package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/types"
)

// TestPieceBufferReusedOnlyAfterSegments: a statement's pieces share one
// PieceBuffer. A large piece goes to its segment and leaves the buffer to
// the next; a small one keeps its payload until it is written, which the
// large piece after it must not overwrite. Every row reads back as
// written.
func TestPieceBufferReusedOnlyAfterSegments(t *testing.T) {
	ctx := context.Background()
	e := openTest(t, t.TempDir())
	cols := []catalog.Column{{Name: "k", Type: types.TInt64}, {Name: "v", Type: types.TVarchar}}
	rel, err := e.CreateTable(ctx, TableSpec{Name: "t", Columns: cols})
	must(t, err)
	value := func(k int64) string { return fmt.Sprintf("%d:%s", k, strings.Repeat("v", 1000+int(k%7))) }
	var buf PieceBuffer
	var pieces []*Prepared
	k := int64(0)
	for i, n := range []int{200, 2, 200, 1, 300} {
		b := types.NewUnboundedBuilder([]types.Type{types.TInt64, types.TVarchar})
		for range n {
			v := value(k)
			if n < 10 {
				v = fmt.Sprintf("%d:small", k)
			}
			b.Append(types.Insert, types.Row{k, v})
			k++
		}
		p, err := e.Prepare(ctx, rel, b.Take(), &buf)
		must(t, err)
		if small := n < 10; p.KeepsRows() != small {
			t.Fatalf("piece %d of %d rows: KeepsRows = %v", i, n, p.KeepsRows())
		}
		pieces = append(pieces, p)
	}
	tw, err := e.LockTable(ctx, rel)
	must(t, err)
	for _, p := range pieces {
		must(t, tw.StagePrepared(p))
	}
	must(t, e.Commit(ctx, tw))
	tw.Close()
	must(t, e.Flush(ctx))
	rows, err := e.Scan(ctx, "t")
	must(t, err)
	if int64(len(rows)) != k {
		t.Fatalf("%d rows, want %d", len(rows), k)
	}
	for _, r := range rows {
		k := r[0].(int64)
		want := value(k)
		if strings.HasSuffix(r[1].(string), ":small") {
			want = fmt.Sprintf("%d:small", k)
		}
		if r[1] != want {
			t.Fatalf("row %d holds %.40q…", k, r[1])
		}
	}
}
