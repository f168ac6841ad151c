package source

import (
	"context"
	"testing"

	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/stream/streamtest"
	"github.com/sluice-db/sluice/internal/types"
)

// writeLoad writes a load record naming a one-row file (id 1) of the
// source's table, covering one record of rows text, in one batch.
func writeLoad(t *testing.T, store *storage.Store, text string) *storage.LoadedFile {
	t.Helper()
	f := streamtest.LoadFile(t, store, srcTableID)
	b, err := EncodeDML(types.MustParseChunk(srcSchema, text))
	if err != nil {
		t.Fatal(err)
	}
	ws := []storage.TableDMLWrite{{Table: srcTableID, DMLWrite: store.LoadWrite(f, 1)},
		{Table: srcTableID, DMLWrite: storage.DMLWrite{Payload: b}}}
	if _, err := store.WriteDMLBatch(context.Background(), ws, nil); err != nil {
		t.Fatal(err)
	}
	return f
}

// loadedRow reports whether the committed table holds the load file's row.
func loadedRow(t *testing.T, store *storage.Store) bool {
	t.Helper()
	sn, err := store.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer sn.Close()
	desc := storage.TableDesc{ID: srcTableID, Types: []types.Type{types.TInt64}, PK: []int{0}, DistKey: []int{0}}
	_, ok, err := sn.Get(context.Background(), desc, types.Row{int64(1)})
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

// TestTableSourceTakesALoad: a source passing fresh rows on emits a load's
// file instead of the records it covers, and stages the file with the
// next barrier, so that the epoch's commit ingests it with the position
// past the load; the records after it are read as before.
func TestTableSourceTakesALoad(t *testing.T) {
	store := streamtest.OpenStore(t)
	h := &srcHarness{store: store, thr: stream.NewThrottle(), chunk: 8, freshRows: true}
	h.rebuild(t)
	h.barrier(1)
	expectText(t, next(t, h.src), "barrier 1")
	f := writeLoad(t, store, "+ 7 'covered'")
	appendDML(t, store, "+ 8 'after'")
	m := next(t, h.src)
	if m.Fresh == nil || m.Fresh.Loaded == nil || m.Fresh.Loaded.Path != f.Path || m.Fresh.IDCol != 1 {
		t.Fatalf("got %v, want the load's file", m)
	}
	expectText(t, next(t, h.src), "chunk:\n+ 8 after")
	h.barrier(2)
	expectText(t, next(t, h.src), "barrier 2")
	commit(t, store, 2)
	if p := committedPos(t, store); p != (logPos{seq: 3}) {
		t.Fatalf("committed position %+v, want seq 3", p)
	}
	if !loadedRow(t, store) {
		t.Fatal("the epoch's commit did not ingest the load's file")
	}
}

// TestTableSourceGivesBackALoadWhenThrottled: a load's file pending when
// the source is paused is given back; once resumed under a rate limit,
// the source reads the covered records, and stages no file.
func TestTableSourceGivesBackALoadWhenThrottled(t *testing.T) {
	store := streamtest.OpenStore(t)
	h := &srcHarness{store: store, thr: stream.NewThrottle(), chunk: 8, freshRows: true}
	h.rebuild(t)
	h.barrier(1)
	expectText(t, next(t, h.src), "barrier 1")
	writeLoad(t, store, "+ 7 'covered'")
	if ok, err := h.src.fillLoad(); !ok || err != nil {
		t.Fatalf("fillLoad: %v %v", ok, err)
	}
	h.thr.SetPaused(true)
	expectIdle(t, h.src)
	h.thr.SetRateLimit(1000)
	h.thr.SetPaused(false)
	expectText(t, next(t, h.src), "chunk:\n+ 7 covered")
	h.barrier(2)
	expectText(t, next(t, h.src), "barrier 2")
	commit(t, store, 2)
	if p := committedPos(t, store); p != (logPos{seq: 2}) {
		t.Fatalf("committed position %+v, want seq 2", p)
	}
	if loadedRow(t, store) {
		t.Fatal("a load given back was ingested")
	}
}
