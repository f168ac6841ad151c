package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/cockroachdb/pebble/v2"
)

// A bulk statement is one DML record of a hundred megabytes. Put in the
// log's batch, it was copied into the WAL, kept in memory as a flushable
// batch, flushed into a blob file (a second copy through a compaction
// iterator) and deleted an epoch later. So a record of segmentFrom bytes
// or more goes to a file of its own, a segment, written and synced before
// the log's batch, which holds only its name under the record's key with
// a suffix (dmlRefKey). Readers of the log read the file instead of the
// value; truncation removes it after deleting its key.
//
// A crash before the batch leaves a segment no key names: it is removed
// when its table's log is next opened (sweepSegments). Segment names
// carry the store's open time, so the sweep never touches a file of this
// process that is being written before its record takes a seq.

// segmentFrom is the payload size from which a record goes to a segment
// (a variable so that tests can make it small).
var segmentFrom = 1 << 20

// segmentDirName is the directory, inside the store's, of segments.
const segmentDirName = "sluice-dml"

// dmlRefSuffix ends the key of a record kept in a segment: d|table|seq|f.
const dmlRefSuffix = 'f'

// dmlRefKey returns the key naming the segment of record seq.
func dmlRefKey(tableID uint32, seq uint64) []byte {
	return append(dmlKey(tableID, seq), dmlRefSuffix)
}

// isDMLRefKey reports whether a log key names a segment.
func isDMLRefKey(key []byte) bool {
	return len(key) == 1+4+8+1 && key[len(key)-1] == dmlRefSuffix
}

// writeSegments writes each big payload of ws to a new segment, synced,
// and returns the segments' names ("" for a payload kept inline). On
// error no segment is left.
func (s *Store) writeSegments(ws []TableDMLWrite) ([]string, error) {
	var names []string
	for i, w := range ws {
		if w.Segment == "" && len(w.Payload) < segmentFrom {
			continue
		}
		if names == nil {
			names = make([]string, len(ws))
			if err := s.makeDir(s.segmentDir, &s.segmentDirMade); err != nil {
				s.removeCallerSegments(ws)
				return nil, fmt.Errorf("storage: append dml: %w", err)
			}
		}
		if w.Segment != "" {
			names[i] = w.Segment // written by WriteSegment
			continue
		}
		names[i] = s.newSegmentName(w.Table)
		if err := s.writeFile(s.fs.PathJoin(s.segmentDir, names[i]), w.Payload); err != nil {
			s.removeSegments(names)
			s.removeCallerSegments(ws)
			return nil, fmt.Errorf("storage: append dml to table %d: %w", w.Table, err)
		}
	}
	if names != nil {
		if err := syncDir(s.fs, s.segmentDir); err != nil {
			s.removeSegments(names)
			s.removeCallerSegments(ws)
			return nil, fmt.Errorf("storage: append dml: %w", err)
		}
	}
	return names, nil
}

// WriteSegment writes payload, a record of the table's log to come, to a
// new segment, synced, and returns its name for DMLWrite.Segment. Until a
// WriteDMLBatch takes it, the caller owns it (RemoveSegment); a segment
// left by a crash is removed when its table's log is next opened.
func (s *Store) WriteSegment(tableID uint32, payload []byte) (string, error) {
	if err := s.disk.check(dmlAmplification * len(payload)); err != nil {
		return "", err
	}
	if err := s.makeDir(s.segmentDir, &s.segmentDirMade); err != nil {
		return "", fmt.Errorf("storage: write dml segment: %w", err)
	}
	name := s.newSegmentName(tableID)
	path := s.fs.PathJoin(s.segmentDir, name)
	if err := s.writeFile(path, payload); err != nil {
		_ = s.fs.Remove(path)
		return "", fmt.Errorf("storage: write dml segment: %w", err)
	}
	if err := syncDir(s.fs, s.segmentDir); err != nil {
		_ = s.fs.Remove(path)
		return "", fmt.Errorf("storage: write dml segment: %w", err)
	}
	return name, nil
}

// RemoveSegment removes a segment WriteSegment wrote that no batch took.
func (s *Store) RemoveSegment(name string) { s.removeSegments([]string{name}) }

// removeCallerSegments removes the segments given with ws: a batch that
// fails before it is enqueued takes its callers' segments with it.
func (s *Store) removeCallerSegments(ws []TableDMLWrite) {
	for _, w := range ws {
		if w.Segment != "" {
			s.RemoveSegment(w.Segment)
		}
	}
}

func (s *Store) newSegmentName(tableID uint32) string {
	return fmt.Sprintf("%d-%d-%d.seg", tableID, s.openNanos, s.segmentSeq.Add(1))
}

// bounceBufs are writeFile's bounce buffers (a segment's piece took a
// new one each).
var bounceBufs = sync.Pool{New: func() any { b := make([]byte, 1<<20); return &b }}

// writeFile creates path holding data, synced. It writes through a
// bounce buffer: data is shared with the log's readers, and a vfs.File
// may scribble over what it is given (Pebble's in-memory filesystem does,
// in invariant builds, to catch callers that reuse it).
func (s *Store) writeFile(path string, data []byte) error {
	f, err := s.fs.Create(path, "")
	if err != nil {
		return err
	}
	bp := bounceBufs.Get().(*[]byte)
	defer bounceBufs.Put(bp)
	buf := *bp
	for len(data) > 0 && err == nil {
		n := copy(buf, data)
		_, err = f.Write(buf[:n])
		data = data[n:]
	}
	if err == nil {
		err = f.Sync()
	}
	return s.disk.noSpace(errors.Join(err, f.Close()))
}

// ReadSegment returns the payload kept in segment name (a piece the
// writer put there with WriteSegment and reads back: DMLWrite.LoadRows).
func (s *Store) ReadSegment(name string) ([]byte, error) { return s.readSegment(name) }

// readSegment returns the payload kept in segment name.
func (s *Store) readSegment(name string) ([]byte, error) {
	b, _, err := s.readSegmentSummed(name, false)
	return b, err
}

// A log record's payload ends in the CRC-32C (Castagnoli) of the bytes
// before it (the DML frame, stream/source/dml.go), and its reader checks
// it. Over a segment's payload of megabytes, read whole and checked
// after, the check read the bytes back from memory (0.08 CPU s of a
// million-row load); checked a piece at a time as they are read, they
// are still in the cache.

// segmentPiece is the bytes of a segment read and checked at a time.
const segmentPiece = 256 << 10

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// readSegmentChecked returns the payload kept in segment name, and
// whether its last four bytes are the CRC-32C of the rest.
func (s *Store) readSegmentChecked(name string) ([]byte, bool, error) {
	return s.readSegmentSummed(name, true)
}

// readSegmentSummed reads segment name, checking its sum if sum is set.
func (s *Store) readSegmentSummed(name string, sum bool) ([]byte, bool, error) {
	f, err := s.fs.Open(s.fs.PathJoin(s.segmentDir, name))
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, false, err
	}
	buf := make([]byte, st.Size())
	if !sum {
		_, err := io.ReadFull(f, buf)
		return buf, false, err
	}
	body := max(len(buf)-4, 0)
	var crc uint32
	for off := 0; off < len(buf); {
		n, err := io.ReadFull(f, buf[off:min(off+segmentPiece, len(buf))])
		if err != nil {
			return nil, false, err
		}
		if off < body {
			crc = crc32.Update(crc, castagnoli, buf[off:min(off+n, body)])
		}
		off += n
	}
	return buf, len(buf) >= 4 && crc == binary.LittleEndian.Uint32(buf[body:]), nil
}

// removeSegments removes the named segments ("" entries are skipped).
func (s *Store) removeSegments(names []string) {
	for _, n := range names {
		if n != "" {
			if err := s.fs.Remove(s.fs.PathJoin(s.segmentDir, n)); err != nil && !errors.Is(err, os.ErrNotExist) {
				s.logger.Warn("storage: remove dml segment", "name", n, "err", err)
			}
		}
	}
}

// loadSegments returns the table's log records kept in segments, by seq.
func (s *Store) loadSegments(tableID uint32) (map[uint64]string, error) {
	p := dmlPrefix(tableID)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: prefixEnd(p)})
	if err != nil {
		return nil, fmt.Errorf("storage: open dml log of table %d: %w", tableID, err)
	}
	defer it.Close()
	segs := map[uint64]string{}
	for ok := it.First(); ok; ok = it.Next() {
		switch {
		case isDMLRefKey(it.Key()):
			segs[dmlSeqOf(it.Key())] = string(it.Value())
		case isDMLLoadKey(it.Key()):
			_, name, err := decodeLoadRecord(it.Value())
			if err != nil {
				return nil, fmt.Errorf("storage: open dml log of table %d: record %d: %w", tableID, dmlSeqOf(it.Key()), err)
			}
			segs[dmlSeqOf(it.Key())] = name
		}
	}
	if err := it.Error(); err != nil {
		return nil, fmt.Errorf("storage: open dml log of table %d: %w", tableID, err)
	}
	return segs, nil
}

// sweepSegments removes the table's segments that no log key names and
// that an earlier run of the store wrote: a crash came between a segment
// and its record's batch, or between a truncation and the removal.
func (s *Store) sweepSegments(tableID uint32, named map[uint64]string) error {
	keep := make(map[string]bool, len(named))
	for _, n := range named {
		keep[n] = true
	}
	return s.removeSegmentsOf(tableID, func(name string) bool {
		return !keep[name] && !strings.HasPrefix(name, fmt.Sprintf("%d-%d-", tableID, s.openNanos))
	})
}

// removeSegmentsOf removes the table's segments for which drop is true.
func (s *Store) removeSegmentsOf(tableID uint32, drop func(name string) bool) error {
	names, err := s.fs.List(s.segmentDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("storage: list dml segments: %w", err)
	}
	prefix := fmt.Sprintf("%d-", tableID)
	var gone []string
	for _, n := range names {
		if strings.HasPrefix(n, prefix) && drop(n) {
			gone = append(gone, n)
		}
	}
	s.removeSegments(gone)
	return nil
}

// segmentsThrough removes from t and returns the names of its segments
// with seq ≤ through.
func (t *dmlTable) segmentsThrough(through uint64) []string {
	var names []string
	for seq, n := range t.segments {
		if seq <= through {
			names = append(names, n)
			delete(t.segments, seq)
		}
	}
	return names
}
