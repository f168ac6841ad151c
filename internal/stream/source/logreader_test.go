package source

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"testing"
	"weak"

	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream/streamtest"
	"github.com/sluice-db/sluice/internal/types"
)

// TestLogReaderLetsGoOfTakenRecords: once a record's rows are all taken,
// the reader holds nothing of its payload (a bulk statement's is a hundred
// megabytes), even while the log has nothing new.
func TestLogReaderLetsGoOfTakenRecords(t *testing.T) {
	store := streamtest.OpenStore(t)
	b := types.NewBuilder(srcSchema, 1<<18+1)
	for i := range 1 << 18 {
		b.Append(types.Insert, types.Row{int64(i), "a value long enough to make the record megabytes"})
	}
	payload, err := EncodeDML(b.Take())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.AppendDML(context.Background(), srcTableID, payload); err != nil {
		t.Fatal(err)
	}
	payload = nil
	r := newLogReader(store, srcTableID, srcSchema, logPos{})
	c, _, err := r.take(1024)
	if err != nil || c == nil {
		t.Fatalf("first take: %v %v", c, err)
	}
	held := weak.Make(&r.rec.r.b[0])
	for c != nil {
		if c, _, err = r.take(1024); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	if held.Value() != nil {
		t.Fatal("the reader still holds the payload of a record it has taken whole")
	}
	runtime.KeepAlive(r) // the reader is alive: what it holds is what counts
}

// TestLogReaderSkipsLoadRecords: a load record (a bulk load's file named
// in the log) yields no rows; the records it covers and those after it are
// read as before.
func TestLogReaderSkipsLoadRecords(t *testing.T) {
	ctx := context.Background()
	store := streamtest.OpenStore(t)
	f := streamtest.LoadFile(t, store, srcTableID)
	payload := func(ids ...int64) []byte { return insertsOf(t, ids...) }
	ws := []storage.TableDMLWrite{{Table: srcTableID, DMLWrite: store.LoadWrite(f, 1)},
		{Table: srcTableID, DMLWrite: storage.DMLWrite{Payload: payload(1, 2, 3)}},
		{Table: srcTableID, DMLWrite: storage.DMLWrite{Payload: payload(4, 5)}}}
	if _, err := store.WriteDMLBatch(ctx, ws, nil); err != nil {
		t.Fatal(err)
	}
	r := newLogReader(store, srcTableID, srcSchema, logPos{})
	// A position inside a covered record counts its rows after the load
	// record, not after the record before it.
	c, _, err := r.take(2)
	if err != nil || c == nil || c.Cardinality() != 2 || r.pos != (logPos{seq: 1, rows: 2}) {
		t.Fatalf("first take of 2: %v, position %+v, %v; want 2 rows at {seq 1, rows 2}", c, r.pos, err)
	}
	ids := slices.Clone(c.Cols[0].(*types.Vec[int64]).Vals)
	for {
		c, _, err := r.take(1024)
		if err != nil {
			t.Fatal(err)
		}
		if c == nil {
			break
		}
		ids = append(ids, c.Cols[0].(*types.Vec[int64]).Vals...)
	}
	if fmt.Sprint(ids) != "[1 2 3 4 5]" || r.pos.seq != 3 {
		t.Fatalf("read ids %v, position %+v; want [1 2 3 4 5] through record 3", ids, r.pos)
	}
}

// TestLogReaderTakesLoads: a reader that passes fresh rows on ends a chunk
// before a load record, takes the load's file with the position past the
// records it covers, never reads those, and reads the records after them;
// a load given back (untakeLoad) is read from its covered records instead.
func TestLogReaderTakesLoads(t *testing.T) {
	ctx := context.Background()
	store := streamtest.OpenStore(t)
	f := streamtest.LoadFile(t, store, srcTableID)
	payload := func(ids ...int64) []byte { return insertsOf(t, ids...) }
	if _, err := store.AppendDML(ctx, srcTableID, payload(1, 2)); err != nil {
		t.Fatal(err)
	}
	ws := []storage.TableDMLWrite{{Table: srcTableID, DMLWrite: store.LoadWrite(f, 2)},
		{Table: srcTableID, DMLWrite: storage.DMLWrite{Payload: payload(3, 4)}},
		{Table: srcTableID, DMLWrite: storage.DMLWrite{Payload: payload(5)}}}
	if _, err := store.WriteDMLBatch(ctx, ws, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := store.AppendDML(ctx, srcTableID, payload(6)); err != nil {
		t.Fatal(err)
	}
	readRest := func(r *logReader) string {
		var ids []int64
		for {
			c, _, err := r.take(1024)
			if err != nil {
				t.Fatal(err)
			}
			if c == nil {
				return fmt.Sprint(ids)
			}
			ids = append(ids, c.Cols[0].(*types.Vec[int64]).Vals...)
		}
	}
	for _, giveBack := range []bool{false, true} {
		r := newLogReader(store, srcTableID, srcSchema, logPos{})
		r.freshApart = true
		c, _, err := r.take(1024)
		if err != nil || c == nil || fmt.Sprint(c.Cols[0].(*types.Vec[int64]).Vals) != "[1 2]" || r.pos != (logPos{seq: 1}) {
			t.Fatalf("before the load: %v at %+v, %v; want ids [1 2] at record 1", c, r.pos, err)
		}
		got, after, err := r.takeLoad()
		if err != nil || got == nil || got.Path != f.Path || after != (logPos{seq: 4}) {
			t.Fatalf("takeLoad: %v at %+v, %v; want the file, past record 4", got, after, err)
		}
		want := "[6]"
		if giveBack {
			r.untakeLoad()
			want = "[3 4 5 6]"
		}
		if got := readRest(r); got != want || r.pos != (logPos{seq: 5}) {
			t.Fatalf("after the load (given back %v): ids %s at %+v, want %s at record 5", giveBack, got, r.pos, want)
		}
	}
}

// insertsOf encodes a DML record inserting rows (id, 'v') of srcSchema.
func insertsOf(t *testing.T, ids ...int64) []byte {
	t.Helper()
	b := types.NewBuilder(srcSchema, len(ids)+1)
	for _, id := range ids {
		b.Append(types.Insert, types.Row{id, "v"})
	}
	p, err := EncodeDML(b.Take())
	if err != nil {
		t.Fatal(err)
	}
	return p
}
