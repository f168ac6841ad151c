package storage

import (
	"context"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/sluice-db/sluice/internal/sqlerr"
)

// TestDiskFullRefusesWrites: below the reserve, acknowledged writes (DML,
// catalog changes, segments) fail with 53100 and change nothing, reads go
// on, and writes resume once space is freed.
func TestDiskFullRefusesWrites(t *testing.T) {
	ctx := context.Background()
	fs := vfs.NewMem()
	roomy := vfs.DiskUsage{AvailBytes: 8 << 30, TotalBytes: 10 << 30}
	fs.TestingSetDiskUsage(roomy)
	s, err := Open(ctx, Options{FS: fs, Dir: "db"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.AppendDML(ctx, 5, []byte("before")); err != nil {
		t.Fatal(err)
	}
	wantFull := func(what string, err error) {
		t.Helper()
		if se, ok := sqlerr.As(err); !ok || se.Code != sqlerr.DiskFull {
			t.Errorf("%s on a full disk: %v, want 53100", what, err)
		}
	}
	fs.TestingSetDiskUsage(vfs.DiskUsage{AvailBytes: 100 << 20, TotalBytes: 10 << 30}) // reserve: 512 MiB
	s.disk.measure()
	_, err = s.AppendDML(ctx, 5, []byte("refused"))
	wantFull("AppendDML", err)
	wantFull("PutMeta", s.PutMeta(ctx, "catalog/y", []byte("v")))
	_, err = s.WriteSegment(5, make([]byte, 1<<20))
	wantFull("WriteSegment", err)
	if last, err := s.LastDML(5); err != nil || last != 1 {
		t.Errorf("after refused writes: last DML %d, %v; want 1", last, err)
	}
	if recs, err := s.ReadDML(5, 1, 10); err != nil || len(recs) != 1 {
		t.Errorf("reading on a full disk: %v, %v", recs, err)
	}

	// Room for small writes, not for a segment bigger than what is left
	// above the reserve.
	fs.TestingSetDiskUsage(vfs.DiskUsage{AvailBytes: 600 << 20, TotalBytes: 10 << 30})
	s.disk.measure()
	if _, err := s.AppendDML(ctx, 5, []byte("after")); err != nil {
		t.Errorf("after space was freed: %v", err)
	}
	_, err = s.WriteSegment(5, make([]byte, 100<<20))
	wantFull("a segment larger than the space above the reserve", err)
}

func TestDefaultReserve(t *testing.T) {
	for total, want := range map[uint64]uint64{
		30 << 20:  30 << 20 / 4, // a small file system: a quarter
		1 << 30:   64 << 20,     // at least 64 MiB
		4 << 30:   4 << 30 / 20, // 5 %
		100 << 30: 1 << 30,      // at most 1 GiB
	} {
		if got := defaultReserve(total); got != want {
			t.Errorf("reserve of %d MiB: %d MiB, want %d MiB", total>>20, got>>20, want>>20)
		}
	}
}
