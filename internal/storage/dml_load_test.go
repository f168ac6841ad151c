package storage

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestLoadRecordInTheLog: a load record reads back with its file and
// fields, last in its read, before the records it covers; its file outlives a restart while
// the record is there (the sweep keeps it) and goes with the record's
// truncation; a batch that fails removes it.
func TestLoadRecordInTheLog(t *testing.T) {
	ctx := context.Background()
	fs := vfs.NewMem()
	s := openIngest(t, fs, 1)
	desc := rowIDDesc(5)
	f := loadFile(t, s, desc, 1, 300)
	ws := []TableDMLWrite{{Table: desc.ID, DMLWrite: s.LoadWrite(f, 2)},
		{Table: desc.ID, DMLWrite: DMLWrite{Payload: []byte("covered 1")}},
		{Table: desc.ID, DMLWrite: DMLWrite{Payload: []byte("covered 2")}}}
	if _, err := s.WriteDMLBatch(ctx, ws, nil); err != nil {
		t.Fatal(err)
	}
	checkLoadLog(t, s, desc.ID, f)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openIngest(t, fs, 1)
	checkLoadLog(t, s, desc.ID, f) // the first read of the log sweeps it
	if !exists(fs, f.Path) {
		t.Fatal("the restart's sweep removed a file the log names")
	}
	if err := s.TruncateDML(ctx, desc.ID, 1); err != nil {
		t.Fatal(err)
	}
	if exists(fs, f.Path) {
		t.Fatal("the file outlived its record's truncation")
	}

	g := loadFile(t, s, desc, 400, 410)
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.WriteDMLBatch(canceled, []TableDMLWrite{{Table: desc.ID, DMLWrite: s.LoadWrite(g, 1)},
		{Table: desc.ID, DMLWrite: DMLWrite{Payload: []byte("covered")}}}, nil); err == nil {
		t.Fatal("a canceled batch was written")
	}
	if exists(fs, g.Path) {
		t.Fatal("a failed batch left the file it took over")
	}
	covered := TableDMLWrite{Table: desc.ID, DMLWrite: DMLWrite{Payload: []byte("covered")}}
	other := TableDMLWrite{Table: desc.ID + 1, DMLWrite: DMLWrite{Payload: []byte("another table's")}}
	for name, bad := range map[string]func(w DMLWrite) []TableDMLWrite{
		"with a payload": func(w DMLWrite) []TableDMLWrite {
			w.Payload = []byte("rows")
			return []TableDMLWrite{{Table: desc.ID, DMLWrite: w}, covered}
		},
		"without counts": func(w DMLWrite) []TableDMLWrite {
			w.Load.File.Counts = nil
			return []TableDMLWrite{{Table: desc.ID, DMLWrite: w}, covered}
		},
		"last": func(w DMLWrite) []TableDMLWrite { return []TableDMLWrite{covered, {Table: desc.ID, DMLWrite: w}} },
		"covering another table's record": func(w DMLWrite) []TableDMLWrite {
			return []TableDMLWrite{{Table: desc.ID, DMLWrite: w}, other}
		},
		"covering another load record": func(w DMLWrite) []TableDMLWrite {
			return []TableDMLWrite{{Table: desc.ID, DMLWrite: w}, {Table: desc.ID, DMLWrite: w}}
		},
	} {
		h := loadFile(t, s, desc, 500, 510)
		if _, err := s.WriteDMLBatch(ctx, bad(s.LoadWrite(h, 1)), nil); err == nil {
			t.Fatalf("a load record %s was written", name)
		}
		if exists(fs, h.Path) {
			t.Fatalf("a refused load record %s left its file", name)
		}
	}
}

// checkLoadLog checks the log of table holds the load record of f, then
// the two records it covers.
func checkLoadLog(t *testing.T, s *Store, table uint32, f *LoadedFile) {
	t.Helper()
	recs, err := s.ReadDML(table, 1, 10)
	if err != nil {
		t.Fatal(err)
	}
	// A read ends at a load record: a reader taking the file reads none
	// of the covered records' segments.
	if len(recs) != 1 || recs[0].Load == nil || recs[0].Payload != nil {
		t.Fatalf("the read returned %d records, the first %+v", len(recs), recs[0])
	}
	rest, err := s.ReadDML(table, 2, 10)
	if err != nil {
		t.Fatal(err)
	}
	recs = append(recs, rest...)
	if len(recs) != 3 {
		t.Fatalf("the log holds %d records, want 3", len(recs))
	}
	got := recs[0].Load
	if got.Covers != 2 || got.File.Path != f.Path || got.File.Rows != f.Rows || got.File.LoID != f.LoID ||
		got.File.HiID != f.HiID || !bytes.Equal(got.File.LoKey, f.LoKey) || !bytes.Equal(got.File.HiKey, f.HiKey) ||
		!slices.Equal(got.File.Counts, f.Counts) {
		t.Fatalf("load record %+v, covers %d; want %+v, covers 2", got.File, got.Covers, *f)
	}
	for i, want := range []string{"covered 1", "covered 2"} {
		if r := recs[1+i]; r.Load != nil || string(r.Payload) != want {
			t.Fatalf("record %d: %q (load %v), want %q", r.Seq, r.Payload, r.Load != nil, want)
		}
	}
}

// TestCorruptLoadRecord: every cut of an encoded load record fails to
// decode, with errCorruptLoad.
func TestCorruptLoadRecord(t *testing.T) {
	r := &LoadRecord{Covers: 3, File: LoadedFile{Rows: 9, LoID: 1, HiID: 9, LoKey: []byte("lo"), HiKey: []byte("hi"),
		Counts: make([]int64, 256)}}
	v := encodeLoadRecord(r, "5-1-2.sst")
	if _, name, err := decodeLoadRecord(v); err != nil || name != "5-1-2.sst" {
		t.Fatalf("decode: %q %v", name, err)
	}
	for n := range len(v) {
		if _, _, err := decodeLoadRecord(v[:n]); !errors.Is(err, errCorruptLoad) {
			t.Fatalf("a record cut to %d of %d bytes: %v", n, len(v), err)
		}
	}
	if _, _, err := decodeLoadRecord(append(slices.Clone(v), 0)); !errors.Is(err, errCorruptLoad) {
		t.Fatalf("a record with a byte more: %v", err)
	}
}
