package source

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"
	"unsafe"

	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/stream/streamtest"
	"github.com/sluice-db/sluice/internal/types"
	"pgregory.net/rapid"
)

// TestTableDMLMarksOnlyFreshRuns: a record is marked as a fresh run
// exactly when its visible rows are plain inserts with consecutive,
// non-NULL ids; marked or not, it decodes to the same rows, and its row
// spans are the unmarked record's.
func TestTableDMLMarksOnlyFreshRuns(t *testing.T) {
	for _, tc := range []struct {
		rows  string
		fresh bool
	}{
		{"+ 5 'a'\n+ 6 NULL\n+ 7 'c'", true},
		{"+ -1 'a'", true},
		{"+ 5 'a'\n+ 7 'c'", false},   // a gap
		{"+ 6 'a'\n+ 5 'c'", false},   // falling
		{"+ 5 'a'\n- 6 'c'", false},   // a delete
		{"U- 5 'a'\nU+ 5 'b'", false}, // an update
		{"+ NULL 'a'", false},         // no id
		{"+ 5 'a'\n+ 5 'a'", false},   // a repeated id
	} {
		c := types.MustParseChunk(srcSchema, tc.rows)
		b, err := EncodeTableDML(c, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := b[1] == dmlVersionFresh; got != tc.fresh {
			t.Errorf("%q: marked fresh %v, want %v", tc.rows, got, tc.fresh)
		}
		got, err := DecodeDML(b, srcSchema)
		if err != nil || got.String() != c.String() {
			t.Fatalf("%q: decoded %v, %v", tc.rows, got, err)
		}
		plain, _ := EncodeDML(c)
		want, _ := RowSpans(plain, srcSchema)
		spans, err := RowSpans(b, srcSchema)
		if err != nil || len(spans) != len(want) {
			t.Fatalf("%q: spans %v, %v; want %v", tc.rows, spans, err, want)
		}
		shift := uint32(len(b) - len(plain)) // the run's header
		for i := range spans {
			if spans[i] != want[i]+shift {
				t.Fatalf("%q: spans %v, want %v shifted by %d", tc.rows, spans, want, shift)
			}
		}
	}
	if b, _ := EncodeTableDML(types.MustParseChunk(srcSchema, "+ 1 'a'"), -1); b[1] != dmlVersion {
		t.Fatal("a table without a row id column marked a record fresh")
	}
}

// TestFreshRunHeaderChecked: a version 2 header naming a column that is not
// bigint, or ids that would overflow, is corrupt, not trusted.
func TestFreshRunHeaderChecked(t *testing.T) {
	c := types.MustParseChunk(srcSchema, "+ 1 'a'\n+ 2 'b'")
	for name, run := range map[string]*FreshRun{
		"varchar id": {IDCol: 1, First: 1},
		"no column":  {IDCol: 9, First: 1},
		"overflow":   {IDCol: 0, First: 1<<63 - 1},
	} {
		b, err := encodeDML(c, run)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := DecodeDML(b, srcSchema); !errors.Is(err, ErrCorruptDML) {
			t.Errorf("%s: decode error %v, want ErrCorruptDML", name, err)
		}
	}
}

// TestTableSourceEmitsFreshRows: with the plan's FreshRows set, a fresh
// run's rows leave the source encoded, in windows, with their ids, while
// other records leave as chunks, in log order; a barrier between windows
// records the position inside the record, and a rebuilt source resumes
// there. Decoded, the messages are the rows the chunk path emits.
func TestTableSourceEmitsFreshRows(t *testing.T) {
	old := decodeWindow
	decodeWindow = 2
	defer func() { decodeWindow = old }()
	store := streamtest.OpenStore(t)
	h := &srcHarness{store: store, thr: stream.NewThrottle(), chunk: 4, freshRows: true}
	h.rebuild(t)
	h.barrier(1)
	expectText(t, next(t, h.src), "barrier 1")
	appendTableDML(t, store, "+ 10 'a'\n+ 11 'b'\n+ 12 NULL")
	appendTableDML(t, store, "+ 1 'x'\n- 1 'x'")
	appendTableDML(t, store, "+ 13 'c'")
	expectFresh(t, next(t, h.src), "+ 10 a\n+ 11 b", 10, 11)
	h.thr.SetPaused(true)
	h.barrier(2)
	expectText(t, next(t, h.src), "barrier 2") // inside record 1
	commit(t, store, 2)
	store.AbortUncommitted()
	h.rebuild(t)
	h.thr.SetPaused(false)
	h.barrier(3)
	expectText(t, next(t, h.src), "barrier 3")
	expectFresh(t, next(t, h.src), "+ 12 NULL", 12)
	expectText(t, next(t, h.src), "chunk:\n+ 1 x\n- 1 x")
	expectFresh(t, next(t, h.src), "+ 13 c", 13)
	expectIdle(t, h.src)
}

func appendTableDML(t tb, store *storage.Store, text string) {
	t.Helper()
	b, err := EncodeTableDML(types.MustParseChunk(srcSchema, text), 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.AppendDML(context.Background(), srcTableID, b); err != nil {
		t.Fatal(err)
	}
}

func expectFresh(t tb, m stream.Message, rows string, ids ...int64) {
	t.Helper()
	if m.Fresh == nil {
		t.Fatalf("got %v, want fresh rows", m)
	}
	if !slices.Equal(m.Fresh.IDs, ids) {
		t.Fatalf("fresh ids %v, want %v", m.Fresh.IDs, ids)
	}
	c, err := m.Fresh.Decode(srcSchema)
	if err != nil {
		t.Fatal(err)
	}
	expectText(t, stream.ChunkMsg(c), "chunk:\n"+rows)
}

// TestFreshWindowsCoverRecord: however a fresh record is cut into windows,
// the windows' ids and rows are the record's, in order.
func TestFreshWindowsCoverRecord(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 40).Draw(t, "rows")
		first := rapid.Int64Range(-1000, 1000).Draw(t, "first")
		c := types.MustColumn(types.TInt64, n)
		s := types.MustColumn(types.TVarchar, n)
		for k := range n {
			c.Append(first + int64(k))
			s.Append(rapid.StringMatching(`[a-z]{0,6}`).Draw(t, "s"))
		}
		chunk := types.NewChunk([]types.Column{c, s}, make([]types.Op, n))
		b, err := EncodeTableDML(chunk, 0)
		if err != nil {
			t.Fatal(err)
		}
		cur, err := openDML(b, srcSchema)
		if err != nil {
			t.Fatal(err)
		}
		var got []types.Row
		for {
			f, err := cur.fresh(rapid.IntRange(1, 9).Draw(t, "window"))
			if err != nil {
				t.Fatal(err)
			}
			if f == nil {
				break
			}
			d, err := f.Decode(srcSchema)
			if err != nil {
				t.Fatal(err)
			}
			for k := range f.Len() {
				row := d.Row(k)
				if row[0] != f.IDs[k] {
					t.Fatalf("row %v carries id %d", row, f.IDs[k])
				}
				got = append(got, row)
			}
		}
		if len(got) != n {
			t.Fatalf("windows held %d rows, want %d", len(got), n)
		}
		for k, row := range got {
			if types.CompareRows(row, chunk.Row(k)) != 0 {
				t.Fatalf("row %d is %v, want %v", k, row, chunk.Row(k))
			}
		}
	})
}

// TestAppendTableDMLReusesBuffer: a buffer large enough holds the payload
// (a bulk COPY encodes every piece into one); a buffer too small still
// gives the right payload.
func TestAppendTableDMLReusesBuffer(t *testing.T) {
	b := types.NewBuilder(srcSchema, 2001)
	for i := range 2000 {
		b.Append(types.Insert, types.Row{int64(i), "some text of a row"})
	}
	c := b.Take()
	want, err := EncodeTableDML(c, 0)
	if err != nil {
		t.Fatal(err)
	}
	big := make([]byte, 5, 2*len(want))
	got, err := AppendTableDML(big, c, 0)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("into a large buffer: %v", err)
	}
	if unsafe.SliceData(got) != unsafe.SliceData(big) {
		t.Fatal("a large enough buffer was not reused")
	}
	got, err = AppendTableDML(make([]byte, 3, 100), c, 0)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("into a small buffer: %v", err)
	}
}
