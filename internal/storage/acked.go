package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"sync"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// Acknowledged writes are counted, so that a damaged write-ahead log is
// noticed instead of silently losing them. Every write a client is told is
// durable (a DML batch, a catalog change through PutMeta/DeleteMeta)
// carries the next count under keyAcked, in its own synced Pebble batch,
// and once synced the count is written to the file ackedFileName beside
// the store (not synced: a process crash keeps it, and after an OS crash
// it can only be behind, which hides a loss but never invents one).
//
// Pebble replays what its WAL holds and treats a torn or zeroed tail, or a
// missing file, as the end of the log: truncating, zeroing or deleting the
// .log used to open cleanly with acknowledged rows gone. Now Open compares
// the two counts: a file ahead of the store means acknowledged writes are
// missing, and the store refuses to open (ErrAcknowledgedWritesLost)
// unless Options.AcceptDataLoss says to go on without them.
var keyAcked = []byte{prefixSystem, 'a'}

// ackedFileName is the file holding the last acknowledged count.
const ackedFileName = "ACKNOWLEDGED"

// ErrAcknowledgedWritesLost is wrapped by Open's error when the store
// lacks writes it acknowledged.
var ErrAcknowledgedWritesLost = errors.New("acknowledged writes are missing from the store")

// ackCounter assigns the counts (under the DML log's mutex, which orders
// the batches in Pebble's commit pipeline) and records the synced ones.
type ackCounter struct {
	next uint64 // the last count assigned; guarded by Store.dml.mu

	mu      sync.Mutex
	written uint64
	f       vfs.File
}

// openAcked checks the store's count against the file's and opens the
// file for recording. A missing or unreadable file is recreated: the
// check needs a file this run has written.
func (s *Store) openAcked(acceptLoss bool) error {
	stored, err := readAckedKey(s.db)
	if err != nil {
		return err
	}
	s.acked.next, s.acked.written = stored, stored
	path := s.fs.PathJoin(s.dir, ackedFileName)
	recorded, ok, err := readAckedFile(s.fs, path)
	if err != nil {
		return err
	}
	if ok && recorded > stored {
		lost := fmt.Errorf("storage: %w: %d write batches acknowledged to clients (INSERT, UPDATE, DELETE, COPY, DDL) "+
			"are not in %s, whose write-ahead log (*.log) was truncated, zeroed or deleted: the store reaches batch %d, "+
			"clients were told batch %d was durable; restore the directory from a backup, or start with --accept-data-loss "+
			"to open it without them", ErrAcknowledgedWritesLost, recorded-stored, s.dir, stored, recorded)
		if !acceptLoss {
			return lost
		}
		s.logger.Error("opening the store without acknowledged writes (--accept-data-loss)", "err", lost)
	}
	f, err := s.fs.OpenReadWrite(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		return fmt.Errorf("storage: open %s: %w", path, err)
	}
	s.acked.f = f
	if !ok || recorded != stored {
		return s.acked.writeLocked(stored)
	}
	return nil
}

// assignLocked puts the next count into b; the caller holds s.dml.mu and
// enqueues b before releasing it, so counts rise in commit order.
func (a *ackCounter) assignLocked(b *pebble.Batch) (uint64, error) {
	a.next++
	var v [8]byte
	binary.BigEndian.PutUint64(v[:], a.next)
	if err := b.Set(keyAcked, v[:], nil); err != nil {
		return 0, fmt.Errorf("storage: count acknowledged write: %w", err)
	}
	return a.next, nil
}

// recordAcked records that the batch of count n is durable. The batch is
// committed whatever happens to the file: a failed write only leaves the
// file behind (which can hide a loss, never invent one), so it is logged,
// not returned; failing the write would have the client retry a committed
// change.
func (s *Store) recordAcked(n uint64) {
	if err := s.acked.synced(n); err != nil {
		s.logger.Warn("storage: recording an acknowledged write", "err", err)
	}
}

// synced records that the batch of count n is durable.
func (a *ackCounter) synced(n uint64) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if n <= a.written {
		return nil
	}
	return a.writeLocked(n)
}

// writeLocked writes n and its checksum over the file's 12 bytes.
func (a *ackCounter) writeLocked(n uint64) error {
	a.written = n
	if a.f == nil {
		return nil
	}
	var buf [12]byte
	binary.BigEndian.PutUint64(buf[:8], n)
	binary.BigEndian.PutUint32(buf[8:], crc32.ChecksumIEEE(buf[:8]))
	if _, err := a.f.WriteAt(buf[:], 0); err != nil {
		return fmt.Errorf("storage: record acknowledged write: %w", err)
	}
	return nil
}

// close syncs and closes the file.
func (a *ackCounter) close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.f == nil {
		return nil
	}
	err := errors.Join(a.f.Sync(), a.f.Close())
	a.f = nil
	return err
}

func readAckedKey(r pebble.Reader) (uint64, error) {
	return readUint64(r, keyAcked, "acknowledged count")
}

// readAckedFile reads the file's count; ok is false when there is none
// to trust (no file, a torn write).
func readAckedFile(fs vfs.FS, path string) (n uint64, ok bool, err error) {
	f, err := fs.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("storage: open %s: %w", path, err)
	}
	defer f.Close()
	var buf [12]byte
	if _, err := io.ReadFull(f, buf[:]); err != nil {
		return 0, false, nil
	}
	if crc32.ChecksumIEEE(buf[:8]) != binary.BigEndian.Uint32(buf[8:]) {
		return 0, false, nil
	}
	return binary.BigEndian.Uint64(buf[:8]), true, nil
}
