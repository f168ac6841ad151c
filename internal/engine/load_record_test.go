package engine

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream/source"
	"github.com/sluice-db/sluice/internal/stream/streamtest"
	"github.com/sluice-db/sluice/internal/types"
)

// TestReplaySkipsLoadRecords: a restart replays a table's log beyond its
// committed position into its latest state; a load record there (a bulk
// load's file, named before the records holding the same rows) is skipped,
// and the rows come once, from the records it covers.
func TestReplaySkipsLoadRecords(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e := openTest(t, dir)
	pkTable(ctx, t, e)
	u, _ := e.Catalog().ByName("u")
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := storage.Open(ctx, storage.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	f := streamtest.LoadFile(t, st, u.Table.ID)
	covered, err := source.EncodeDML(types.MustParseChunk(kv, "+ 1 10\n+ 2 20\n"))
	if err != nil {
		t.Fatal(err)
	}
	ws := []storage.TableDMLWrite{{Table: u.Table.ID, DMLWrite: st.LoadWrite(f, 1)},
		{Table: u.Table.ID, DMLWrite: storage.DMLWrite{Payload: covered}}}
	if _, err := st.WriteDMLBatch(ctx, ws, nil); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	e = openTest(t, dir)
	sn, err := e.LatestSnapshot(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	defer sn.Close()
	it, err := sn.ScanTable(ctx, toDesc(u))
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var rows []types.Row
	for {
		row, ok, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		rows = append(rows, row)
	}
	slices.SortFunc(rows, types.CompareRows)
	if got := fmt.Sprint(rows); got != "[[1 10] [2 20]]" {
		t.Fatalf("latest rows after the restart: %s", got)
	}
}
