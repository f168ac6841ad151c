package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/types"
)

// TestWriteChecksRowIDChanges: a table keyed by its hidden row id takes its
// update pairs as overwrites, unread, so Write checks them: a pair whose
// old row is stale changes the row held, and a delete or pair of a row id
// the table no longer holds does nothing. The table, and a view over it
// that reports every inconsistent change, agree after each write.
func TestWriteChecksRowIDChanges(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	e, err := Open(ctx, Options{InMemory: true, BarrierInterval: 5 * time.Millisecond, Parallelism: 2, CheckInserts: true})
	must(t, err)
	defer func() { must(t, e.Close()) }()
	ii := []catalog.Column{{Name: "k", Type: types.TInt64}, {Name: "v", Type: types.TInt64}}
	tab, err := e.CreateTable(ctx, TableSpec{Name: "t", Columns: ii})
	must(t, err)
	b := newBuilder(ctx, e)
	_, err = e.CreateMaterializedView(ctx, b.view("w", b.scan(tab), []string{"k", "v", "rid"}))
	must(t, err)
	must(t, e.Write(ctx, "t", chunkOf(types.Insert, types.Row{int64(1), int64(10)})))
	must(t, e.Flush(ctx))
	rows, err := e.Scan(ctx, "t")
	must(t, err)
	if len(rows) != 1 {
		t.Fatalf("t holds %v", rows)
	}
	id := rows[0][2]
	stale := types.Row{int64(1), int64(10), id}
	steps := []struct {
		ops  []types.Op
		rows []types.Row
		want string
	}{
		{[]types.Op{types.UpdateDelete, types.UpdateInsert}, []types.Row{stale, {int64(1), int64(11), id}}, "[[1 11]]"},
		{[]types.Op{types.UpdateDelete, types.UpdateInsert}, []types.Row{stale, {int64(1), int64(12), id}}, "[[1 12]]"},
		{[]types.Op{types.Delete}, []types.Row{stale}, "[]"},
		{[]types.Op{types.UpdateDelete, types.UpdateInsert}, []types.Row{stale, {int64(1), int64(13), id}}, "[]"},
		{[]types.Op{types.Delete}, []types.Row{stale}, "[]"},
	}
	for i, s := range steps {
		c := types.NewUnboundedBuilder([]types.Type{types.TInt64, types.TInt64, types.TInt64})
		for j, op := range s.ops {
			c.Append(op, s.rows[j])
		}
		must(t, e.Write(ctx, "t", c.Take()))
		must(t, e.Flush(ctx))
		for _, name := range []string{"t", "w"} {
			if got := visibleKV(t, e, name); got != s.want {
				t.Fatalf("step %d: %s holds %s, want %s", i, name, got, s.want)
			}
		}
		if n := e.InconsistentOps(); n != 0 {
			t.Fatalf("step %d: the view saw %d inconsistent changes", i, n)
		}
	}
}

func chunkOf(op types.Op, rows ...types.Row) *types.Chunk {
	b := types.NewUnboundedBuilder([]types.Type{types.TInt64, types.TInt64})
	for _, r := range rows {
		b.Append(op, r)
	}
	return b.Take()
}

// visibleKV is name's rows' first two columns, printed.
func visibleKV(t *testing.T, e *Engine, name string) string {
	t.Helper()
	rows, err := e.Scan(context.Background(), name)
	must(t, err)
	kv := make([][]any, len(rows))
	for i, r := range rows {
		kv[i] = []any{r[0], r[1]}
	}
	return fmt.Sprint(kv)
}

// TestWriteRefusesBadRowIDChanges: Write refuses, before reading, a
// delete without its row id, any change of an append-only table, and an
// update pair whose halves name different row ids.
func TestWriteRefusesBadRowIDChanges(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	e, err := Open(ctx, Options{InMemory: true, BarrierInterval: 5 * time.Millisecond, Parallelism: 2})
	must(t, err)
	defer func() { must(t, e.Close()) }()
	ii := []catalog.Column{{Name: "k", Type: types.TInt64}, {Name: "v", Type: types.TInt64}}
	_, err = e.CreateTable(ctx, TableSpec{Name: "t", Columns: ii})
	must(t, err)
	_, err = e.CreateTable(ctx, TableSpec{Name: "a", Columns: ii, AppendOnly: true})
	must(t, err)
	for _, name := range []string{"t", "a"} {
		must(t, e.Write(ctx, name, chunkOf(types.Insert, types.Row{int64(1), int64(10)})))
	}
	must(t, e.Flush(ctx))
	rows, err := e.Scan(ctx, "t")
	must(t, err)
	id := rows[0][2].(int64)
	three := []types.Type{types.TInt64, types.TInt64, types.TInt64}
	moved := types.NewUnboundedBuilder(three)
	moved.Append(types.UpdateDelete, types.Row{int64(1), int64(10), id})
	moved.Append(types.UpdateInsert, types.Row{int64(1), int64(11), id + 1})
	held := types.NewUnboundedBuilder(three)
	held.Append(types.Delete, types.Row{int64(1), int64(10), int64(12345)})
	for _, c := range []struct {
		table string
		chunk *types.Chunk
		want  string
	}{
		{"t", chunkOf(types.Delete, types.Row{int64(1), int64(10)}), "without its row id"},
		{"a", held.Take(), "append-only"},
		{"t", moved.Take(), "changes a row id"},
	} {
		if err := e.Write(ctx, c.table, c.chunk); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("write into %s: %v, want an error saying %q", c.table, err, c.want)
		}
	}
	if got := visibleKV(t, e, "t"); got != "[[1 10]]" {
		t.Fatalf("t holds %s", got)
	}
}
