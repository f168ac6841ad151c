package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// recoverIngest finishes what a crash left of a commit with files
// (ingest.go): an intent above the committed epoch means the epoch never
// committed, so every key of its files is deleted (fresh rows and fresh
// keys: no older version of them exists to restore). Then every file left in
// the ingest directory is removed: none belongs to a committed epoch's
// commit in progress, and sealed epochs that did not commit are redone.
func (s *Store) recoverIngest(committed uint64) error {
	v, closer, err := s.db.Get(keyIngestIntent)
	switch {
	case errors.Is(err, pebble.ErrNotFound):
		return s.removeIngestFiles()
	case err != nil:
		return fmt.Errorf("storage: read ingest intent: %w", err)
	}
	epoch, names, err := decodeIntent(v)
	closer.Close()
	if err != nil {
		return fmt.Errorf("storage: %w", err)
	}
	if epoch <= committed {
		names = nil // the commit finished: only the files are left
	}
	paths := make([]string, len(names))
	for i, n := range names {
		paths[i] = s.fs.PathJoin(s.ingestDir, n)
	}
	if err := s.undoIngest(epoch, paths); err != nil {
		return fmt.Errorf("storage: %w (the store may hold part of an epoch it never committed; restore it from a backup)", err)
	}
	return s.removeIngestFiles()
}

// undoIngest deletes every key of the files of epoch's commit and its
// intent, synced. The files hold fresh rows and fresh keys (ingest.go,
// ingest_items.go), none with a committed row, so this restores the store
// as it was whether or not they were ingested.
func (s *Store) undoIngest(epoch uint64, paths []string) error {
	b := s.db.NewBatch()
	defer b.Close()
	for _, p := range paths {
		if err := s.eachKey(p, func(k []byte) error { return b.Delete(k, nil) }); err != nil {
			return fmt.Errorf("undo the uncommitted ingest of epoch %d: file %s: %w", epoch, p, err)
		}
	}
	if err := b.Delete(keyIngestIntent, nil); err != nil {
		return err
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("undo the uncommitted ingest of epoch %d: %w", epoch, err)
	}
	return nil
}

// eachKey calls fn with every key of an sstable, in order.
func (s *Store) eachKey(name string, fn func([]byte) error) error {
	r, err := s.openSST(name)
	if err != nil {
		return err
	}
	defer r.Close()
	it, err := r.NewIter(sstable.NoTransforms, nil, nil, sstable.AssertNoBlobHandles)
	if err != nil {
		return err
	}
	for kv := it.First(); kv != nil; kv = it.Next() {
		if err := fn(kv.K.UserKey); err != nil {
			_ = it.Close()
			return err
		}
	}
	return it.Close()
}

// encodeIntent encodes an epoch and the base names of its files.
func encodeIntent(epoch uint64, files []*ingestFile, base func(string) string) []byte {
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = base(f.path)
	}
	return append(binary.BigEndian.AppendUint64(nil, epoch), strings.Join(names, "\n")...)
}

// decodeIntent is encodeIntent's inverse.
func decodeIntent(v []byte) (uint64, []string, error) {
	if len(v) < 8 {
		return 0, nil, fmt.Errorf("corrupt ingest intent (%d bytes)", len(v))
	}
	epoch := binary.BigEndian.Uint64(v)
	if len(v) == 8 {
		return epoch, nil, nil
	}
	return epoch, strings.Split(string(v[8:]), "\n"), nil
}

// makeDir creates dir (inside the store's) on first use; made remembers it.
func (s *Store) makeDir(dir string, made *atomic.Bool) error {
	if made.Load() {
		return nil
	}
	if err := s.fs.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := syncDir(s.fs, s.dir); err != nil {
		return err
	}
	made.Store(true)
	return nil
}

// syncIngestDir makes the names of the files written into the ingest
// directory durable.
func (s *Store) syncIngestDir() error { return syncDir(s.fs, s.ingestDir) }

func syncDir(fs vfs.FS, dir string) error {
	d, err := fs.OpenDir(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}

// removeIngestFiles removes every file of the ingest directory.
func (s *Store) removeIngestFiles() error {
	names, err := s.fs.List(s.ingestDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("storage: list %s: %w", s.ingestDir, err)
	}
	for _, n := range names {
		if err := s.fs.Remove(s.fs.PathJoin(s.ingestDir, n)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("storage: remove %s: %w", n, err)
		}
	}
	return nil
}

// errSimulatedCrash, returned by a test's crashAt, stops a commit where it
// is, doing nothing more, as if the process had died there.
var errSimulatedCrash = errors.New("storage: simulated crash")

// crashPoint lets a test fail a commit at a named step, or stop it there
// as a crash would (errSimulatedCrash).
func (s *Store) crashPoint(step string) error {
	if s.crashAt == nil {
		return nil
	}
	return s.crashAt(step)
}
