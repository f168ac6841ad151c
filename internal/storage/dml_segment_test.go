package storage

import (
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestSegmentsSurviveCrashAndLeaveWithTheLog: a big record lives in a
// segment, is read back after a crash, and its segment goes when the log
// is truncated past it or its table is dropped. A segment no record names
// (a crash before its batch) is removed when its table's log is opened.
func TestSegmentsSurviveCrashAndLeaveWithTheLog(t *testing.T) {
	defer func(n int) { segmentFrom = n }(segmentFrom)
	segmentFrom = 64
	ctx := context.Background()
	fs := vfs.NewCrashableMem()
	s, err := Open(ctx, Options{FS: fs, Dir: "db"})
	if err != nil {
		t.Fatal(err)
	}
	big := []byte(strings.Repeat("b", 100))
	for _, p := range [][]byte{[]byte("small"), big, big[:80]} {
		if _, err := s.AppendDML(ctx, 7, p); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.AppendDML(ctx, 8, big); err != nil {
		t.Fatal(err)
	}
	if got := segmentsIn(t, fs, s); len(got) != 3 {
		t.Fatalf("segments after three big appends: %v", got)
	}
	crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0, RNG: rand.New(rand.NewPCG(3, 4))})
	_ = s.Close()
	orphan := crashed.PathJoin(crashed.PathJoin("db", segmentDirName), "7-1-1.seg")
	if err := writeTestFile(crashed, orphan); err != nil {
		t.Fatal(err)
	}
	s2 := openMem(t, crashed)
	recs, err := s2.ReadDML(7, 1, 10)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"small", string(big), string(big[:80])}
	if got := payloads(recs); !slices.Equal(got, want) {
		t.Fatalf("records after the crash: %q, want %q", got, want)
	}
	if got := segmentsIn(t, crashed, s2); slices.Contains(got, "7-1-1.seg") || len(got) != 3 {
		t.Fatalf("segments once table 7's log is open: %v (the orphan must go, the three others stay)", got)
	}
	if err := s2.TruncateDML(ctx, 7, 2); err != nil {
		t.Fatal(err)
	}
	if got := segmentsIn(t, crashed, s2); len(got) != 2 {
		t.Fatalf("segments after truncating table 7 through seq 2: %v, want 2", got)
	}
	if err := s2.DropTableState(ctx, 8); err != nil {
		t.Fatal(err)
	}
	if got := segmentsIn(t, crashed, s2); len(got) != 1 || !strings.HasPrefix(got[0], "7-") {
		t.Fatalf("segments after dropping table 8: %v, want table 7's last", got)
	}
}

func segmentsIn(t *testing.T, fs vfs.FS, s *Store) []string {
	t.Helper()
	names, err := fs.List(s.segmentDir)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	return names
}

func writeTestFile(fs vfs.FS, path string) error {
	if err := fs.MkdirAll(fs.PathDir(path), 0o755); err != nil {
		return err
	}
	f, err := fs.Create(path, "")
	if err != nil {
		return err
	}
	_, err = f.Write([]byte("orphan"))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func payloads(recs []DMLRecord) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = string(r.Payload)
	}
	return out
}

// TestWrittenSegmentIsTakenByItsBatch: a segment written ahead of its
// record (WriteSegment) becomes the record's when the batch is enqueued,
// is read back as its payload, and goes with a batch that fails first.
func TestWrittenSegmentIsTakenByItsBatch(t *testing.T) {
	ctx := context.Background()
	fs := vfs.NewMem()
	s := openMem(t, fs)
	payload := []byte(strings.Repeat("p", 300))
	name, err := s.WriteSegment(7, payload)
	if err != nil {
		t.Fatal(err)
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.WriteDMLBatch(canceled, []TableDMLWrite{{Table: 7, DMLWrite: DMLWrite{Segment: name}}}, nil); err == nil {
		t.Fatal("a canceled batch was written")
	}
	if got := segmentsIn(t, fs, s); len(got) != 0 {
		t.Fatalf("segments after the failed batch: %v", got)
	}
	if name, err = s.WriteSegment(7, payload); err != nil {
		t.Fatal(err)
	}
	seq, err := s.WriteDML(ctx, 7, DMLWrite{Segment: name})
	if err != nil {
		t.Fatal(err)
	}
	recs, err := s.ReadDML(7, seq, 1)
	if err != nil || len(recs) != 1 || string(recs[0].Payload) != string(payload) {
		t.Fatalf("record %d read back: %v %v", seq, recs, err)
	}
}

// TestStoredReadIsBoundedInBytes: a read from the store stops once the
// records it returns hold readDMLBytes of payload (one record at least),
// and the next read goes on from there.
func TestStoredReadIsBoundedInBytes(t *testing.T) {
	defer func(n, m int) { readDMLBytes, recentDMLBytes = n, m }(readDMLBytes, recentDMLBytes)
	readDMLBytes, recentDMLBytes = 250, 1 // nothing served from memory
	ctx := context.Background()
	s := openMem(t, nil)
	for i := range 5 {
		if _, err := s.AppendDML(ctx, 7, []byte(strings.Repeat(string(rune('a'+i)), 100))); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for from := uint64(1); from <= 5; {
		recs, err := s.ReadDML(7, from, 32)
		if err != nil || len(recs) == 0 || len(recs) > 3 {
			t.Fatalf("read from %d: %d records, %v", from, len(recs), err)
		}
		got = append(got, payloads(recs)...)
		from = recs[len(recs)-1].Seq + 1
	}
	if len(got) != 5 || got[4][0] != 'e' {
		t.Fatalf("records read: %q", got)
	}
}

// TestSegmentRecordsComeChecked: a record read from its segment says
// whether its last four bytes are the CRC-32C of the rest, checked as the
// segment is read piece by piece: true for an intact payload (longer
// than a piece), false once a byte of it changes on disk, and never for
// a record served from memory.
func TestSegmentRecordsComeChecked(t *testing.T) {
	defer func(n int) { segmentFrom = n }(segmentFrom)
	segmentFrom = 64
	ctx := context.Background()
	fs := vfs.NewMem()
	s := openMem(t, fs)
	body := []byte(strings.Repeat("payload ", segmentPiece/4))
	framed := binary.LittleEndian.AppendUint32(slices.Clone(body), crc32.Checksum(body, castagnoli))
	for _, p := range [][]byte{framed, append(slices.Clone(body), "junk"...), []byte("small, kept in memory")} {
		if _, err := s.AppendDML(ctx, 7, p); err != nil {
			t.Fatal(err)
		}
	}
	read := func() []DMLRecord {
		t.Helper()
		s.dml.mu.Lock()
		s.dml.mu.tables[7].recent.clear() // from the segments
		s.dml.mu.Unlock()
		recs, err := s.ReadDML(7, 1, 10)
		if err != nil || len(recs) != 3 {
			t.Fatalf("ReadDML: %d records, %v", len(recs), err)
		}
		return recs
	}
	recs := read()
	if !recs[0].Checked || recs[1].Checked || recs[2].Checked {
		t.Fatalf("checked: %v %v %v, want true false false", recs[0].Checked, recs[1].Checked, recs[2].Checked)
	}
	names := segmentsIn(t, fs, s)
	path := fs.PathJoin(s.segmentDir, names[0])
	f, err := fs.OpenReadWrite(path, vfs.WriteCategoryUnspecified)
	if err == nil {
		_, err = f.WriteAt([]byte("X"), int64(segmentPiece+3))
		err = errors.Join(err, f.Close())
	}
	if err != nil {
		t.Fatal(err)
	}
	if recs := read(); recs[0].Checked {
		t.Fatal("a segment changed on disk still reads as checked")
	}
}
