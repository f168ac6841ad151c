package storage

import (
	"context"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestGatedRecords: the records of a batch across tables are gated, in
// memory and after a restart, until truncation removes them; DMLHorizon
// is the last seq enqueued per table.
func TestGatedRecords(t *testing.T) {
	ctx := context.Background()
	fs := vfs.NewMem()
	s, err := Open(ctx, Options{FS: fs, Dir: "db"})
	if err != nil {
		t.Fatal(err)
	}
	write := func(ws ...TableDMLWrite) {
		t.Helper()
		if _, err := s.WriteDMLBatch(ctx, ws, nil); err != nil {
			t.Fatal(err)
		}
	}
	rec := func(table uint32, payload string) TableDMLWrite {
		return TableDMLWrite{Table: table, DMLWrite: DMLWrite{Payload: []byte(payload)}}
	}
	write(rec(1, "a1"))               // seq 1 of table 1
	write(rec(1, "a2"), rec(2, "b1")) // a transaction: seq 2 of 1, seq 1 of 2
	write(rec(2, "b2"), rec(2, "b3")) // one table: not gated
	check := func(s *Store, table uint32, want ...bool) {
		t.Helper()
		recs, err := s.ReadDML(table, 1, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != len(want) {
			t.Fatalf("table %d: %d records, want %d", table, len(recs), len(want))
		}
		for i, r := range recs {
			if r.Gated != want[i] {
				t.Fatalf("table %d seq %d: gated %v, want %v", table, r.Seq, r.Gated, want[i])
			}
		}
	}
	check(s, 1, false, true)
	check(s, 2, true, false, false)
	if h := s.DMLHorizon(); h[1] != 2 || h[2] != 3 {
		t.Fatalf("horizon %v", h)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(ctx, Options{FS: fs, Dir: "db"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	check(s, 1, false, true)
	check(s, 2, true, false, false)
	if err := s.TruncateDML(ctx, 2, 1); err != nil {
		t.Fatal(err)
	}
	if n := len(s.dml.mu.tables[2].gates); n != 0 {
		t.Fatalf("%d gates left after truncation", n)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(ctx, Options{FS: fs, Dir: "db"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s2.Close() }()
	if _, err := s2.LastDML(2); err != nil {
		t.Fatal(err)
	}
	if n := len(s2.dml.mu.tables[2].gates); n != 0 {
		t.Fatalf("%d gates after truncation and restart", n)
	}
}
