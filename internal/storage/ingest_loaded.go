package storage

import (
	"bytes"
	"fmt"
	"slices"
)

// A bulk load's file (BulkLoad) is written by its statement and named by
// the table's DML log until truncation removes it, like a segment; the
// epoch that consumes the log record naming it ingests it
// (StageLoadedFile), committed with the consumer's log position. The file
// lives in the segment directory (Open empties the ingest directory, and
// the log may need the file after a restart), and truncation, DROP TABLE
// and the sweep of unnamed segments may remove it there at any time. So
// staging hard-links it into the ingest directory, and the epoch's commit
// takes the link like a seal's file: its intent names the link, which only
// Open removes, so a crashed commit can always be undone; a failed or
// dropped epoch removes the link, never the log's file; and a file already
// gone fails the staging, not the commit.
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

// StageLoadedFile stages f, a bulk load's file of table, for epoch's
// commit by owner: the commit ingests it before the epoch's batch. Its
// keys must be table's. Once an epoch with the file committed, the file
// must not be staged again: undoing a later commit that failed would
// delete its rows. A staged file is dropped with owner's staged
// writes (DiscardActor), the table's (DropTableState) or all of them
// (AbortUncommitted); the log's file stays.
func (s *Store) StageLoadedFile(epoch uint64, owner ActorID, table uint32, gens TableGens, f *LoadedFile) error {
	p := tablePrefix(table)
	if !bytes.HasPrefix(f.LoKey, p) || !bytes.HasPrefix(f.HiKey, p) || bytes.Compare(f.LoKey, f.HiKey) > 0 {
		return fmt.Errorf("storage: bulk load file %s holds keys outside table %d", f.Path, table)
	}
	if err := s.makeDir(s.ingestDir, &s.ingestDirMade); err != nil {
		return fmt.Errorf("storage: table %d: stage bulk load file: %w", table, err)
	}
	link := s.newIngestFile(epoch, table, owner)
	if err := s.fs.Link(f.Path, link); err != nil {
		return fmt.Errorf("storage: table %d: stage bulk load file: %w", table, err)
	}
	sb := &stagedBatch{owner: owner, table: table, batch: s.db.NewBatch(), fs: s.fs,
		files: []*ingestFile{{path: link, lo: slices.Clone(f.LoKey), hi: slices.Clone(f.HiKey)}}}
	if err := s.stage(epoch, sb, gens.gen, gens.dropGen); err != nil {
		sb.release()
		return err
	}
	return nil
}
