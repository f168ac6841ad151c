package source

import (
	"fmt"

	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream"
)

// A bulk statement into a table keyed by its hidden row id may write, besides
// its rows, the file of final keys they make (storage.BulkLoad), named by a
// load record before the records holding the rows (storage/dml_load.go).
// When the source passes fresh rows on (emitFresh) and nothing throttles it,
// it takes the file instead of the rows: it emits one message naming the
// file (stream.FreshRows.Loaded), moves its position past every record the
// load covers at once, and at the next barrier stages the file for that
// epoch's commit beside its position (storage.Store.StageLoadedFile), so the
// two commit together or not at all. Recovery starts again from the last
// committed position, before the load record, and stages the file again;
// once its epoch committed, the position is past the record, and the file
// is never staged again. A throttled source reads the covered records, as
// any reader that cannot take the file does; a source throttled while the
// file is pending gives it back (unfillLoad).

// fillLoad makes the file of the load record next in the log pending;
// ok is false when the next rows are not a load's.
func (s *TableSource) fillLoad() (ok bool, err error) {
	f, after, err := s.reader.takeLoad()
	if err != nil || f == nil {
		return false, err
	}
	s.pendingFresh, s.after = &stream.FreshRows{IDCol: s.idCol(), Loaded: f}, after
	return true, nil
}

// unfillLoad gives the pending load's file back to the reader, which
// reads the records it covers instead: a throttled source lets rows pass
// by the chunk, and a paused one must not hold a whole load back from
// the throttle's accounting.
func (s *TableSource) unfillLoad() {
	s.pendingFresh, s.after = nil, s.emitted
	s.reader.untakeLoad()
}

// pendingLoad reports whether the rows pending are a load's file.
func (s *TableSource) pendingLoad() bool {
	return s.pendingFresh != nil && s.pendingFresh.Loaded != nil
}

// idCol is the table's hidden row id column: its last.
func (s *TableSource) idCol() int { return len(s.schema) - 1 }

// stageLoads stages the files emitted in the epoch the barrier closes.
func (s *TableSource) stageLoads(epoch uint64) error {
	for _, f := range s.loads {
		if err := s.store.StageLoadedFile(epoch, storage.ActorID(s.actor), s.tableID, s.gens, f); err != nil {
			return fmt.Errorf("source: stage bulk load of table %d at epoch %d: %w", s.tableID, epoch, err)
		}
	}
	s.loads = nil
	return nil
}
