package batch

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// TestExternalSortMatchesMemory: an ORDER BY sorted on disk in many runs
// gives exactly the rows, order (ties in input order), OFFSET and LIMIT of
// the in-memory sort, and leaves no file behind.
func TestExternalSortMatchesMemory(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 3000).Draw(t, "rows")
		ts := []types.Type{i64, types.TVarchar, i64}
		var rows []types.Row
		for i := range n {
			var g types.Datum
			if v := rapid.IntRange(-1, 9).Draw(t, "g"); v >= 0 {
				g = int64(v)
			}
			rows = append(rows, types.Row{int64(i), fmt.Sprintf("s%03d", rapid.IntRange(0, 50).Draw(t, "s")), g})
		}
		by := []plan.ColumnOrder{{Column: 2, Order: codec.Order{Desc: rapid.Bool().Draw(t, "desc"),
			NullsFirst: rapid.Bool().Draw(t, "nullsFirst")}}}
		if rapid.Bool().Draw(t, "second key") {
			by = append(by, plan.ColumnOrder{Column: 1})
		}
		q := Query{Plan: scanNode(1, ts), Visible: 3, OrderBy: by, Limit: -1, Offset: int64(rapid.IntRange(0, 20).Draw(t, "offset"))}
		if rapid.Bool().Draw(t, "limit") {
			q.Limit = int64(rapid.IntRange(0, n+5).Draw(t, "limit n"))
		}
		dir, err := os.MkdirTemp("", "spilltest")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(dir)
		run := func(opts Options) []types.Row {
			var out []types.Row
			opts.ChunkSize = 7
			if err := Run(context.Background(), memReader{1: rows}, q, opts, func(r types.Row) error {
				out = append(out, r)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			return out
		}
		want := run(Options{})
		got := run(Options{MemoryLimit: 16 << 10, SpillDir: dir}) // a run every ~8 KiB
		if !slices.EqualFunc(got, want, func(a, b types.Row) bool { return fmt.Sprint(a...) == fmt.Sprint(b...) }) {
			t.Fatalf("on disk %d rows, in memory %d; first difference at %d", len(got), len(want), firstDiff(got, want))
		}
		if left, _ := os.ReadDir(dir); len(left) != 0 {
			t.Fatalf("%d run files left behind", len(left))
		}
	})
}

func firstDiff(a, b []types.Row) int {
	for i := range min(len(a), len(b)) {
		if fmt.Sprint(a[i]...) != fmt.Sprint(b[i]...) {
			return i
		}
	}
	return min(len(a), len(b))
}
