package storage

import (
	"fmt"
	"strings"
)

// A bulk load's file (BulkLoad) is written by its statement and named by
// the table's DML log until truncation removes it, like a segment; the
// epoch that consumes the log record naming it ingests it
// (StageLoadedFile), committed with the consumer's log position. Such a
// file differs from a seal's in three ways: it lives in the segment
// directory (Open empties the ingest directory, and the log may still need
// the file after a restart), its staged batch never removes it (an epoch
// that fails stages it again after recovery), and the ingest intent names
// it by its path under the store's directory, not by a base name in the
// ingest directory, so that Open can undo a crashed commit of it.
// docs/design/write-once-bulk.md has the whole path.

// NewLoadPath returns a new path for a bulk load's file of table, in the
// segment directory (made on first use), under the table's prefix so that
// DROP TABLE and the sweep of unnamed segments cover it.
func (s *Store) NewLoadPath(tableID uint32) (string, error) {
	if err := s.makeDir(s.segmentDir, &s.segmentDirMade); err != nil {
		return "", fmt.Errorf("storage: bulk load file: %w", err)
	}
	name := fmt.Sprintf("%d-%d-%d.sst", tableID, s.openNanos, s.segmentSeq.Add(1))
	return s.fs.PathJoin(s.segmentDir, name), nil
}

// TableGens is what a writer of a table presents when it stages: the
// store's generation and the table's drop generation when it started.
// Staging fails if either moved since (recovery, or the table was
// dropped), as a StateTable's seal does.
type TableGens struct{ gen, dropGen uint64 }

// TableGens returns the table's generations now.
func (s *Store) TableGens(tableID uint32) TableGens {
	s.mu.Lock()
	defer s.mu.Unlock()
	return TableGens{gen: s.generation.Load(), dropGen: s.mu.dropGen[tableID]}
}

// StageLoadedFile stages f, a bulk load's file of table in the segment
// directory, for epoch's commit by owner: the commit ingests it before
// the epoch's batch. It is dropped, not removed, with owner's staged
// writes (DiscardActor), the table's (DropTableState) or all of them
// (AbortUncommitted).
func (s *Store) StageLoadedFile(epoch uint64, owner ActorID, table uint32, gens TableGens, f *LoadedFile) error {
	if s.fs.PathDir(f.Path) != s.segmentDir {
		return fmt.Errorf("storage: table %d: bulk load file %s is not in %s", table, f.Path, s.segmentDir)
	}
	sb := &stagedBatch{owner: owner, table: table, batch: s.db.NewBatch(), fs: s.fs,
		files: []*ingestFile{{path: f.Path, lo: f.LoKey, hi: f.HiKey, kept: true}}}
	if err := s.stage(epoch, sb, gens.gen, gens.dropGen); err != nil {
		sb.release()
		return err
	}
	return nil
}

// intentName is how the ingest intent names f: a seal's file by its base
// name in the ingest directory, a kept file by its path under the
// store's directory (it has a separator; base names do not).
func (s *Store) intentName(f *ingestFile) string {
	if f.kept {
		return segmentDirName + "/" + s.fs.PathBase(f.path)
	}
	return s.fs.PathBase(f.path)
}

// intentPath is intentName's inverse.
func (s *Store) intentPath(name string) string {
	if dir, base, ok := strings.Cut(name, "/"); ok {
		return s.fs.PathJoin(s.fs.PathJoin(s.dir, dir), base)
	}
	return s.fs.PathJoin(s.ingestDir, name)
}
