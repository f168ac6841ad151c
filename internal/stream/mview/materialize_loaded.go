package mview

import (
	"fmt"

	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream"
)

// A bulk load into a table keyed by its hidden row id reaches the
// table's materialize as its file (stream.FreshRows.Loaded), which the
// table source stages for the epoch's commit. Each actor adds the file to
// its table (StateTable.AddLoaded: its rows are read by key until the
// commit, and counted), and writes nothing of it. With nothing
// downstream that is all; otherwise the actor reads its vnodes' rows from
// the file and emits them, a chunk at a time, before its next input
// message (so before the epoch's barrier).

// loadedOutput is a loaded file's rows still to emit.
type loadedOutput struct {
	rows  *storage.LoadedRows
	idCol int
}

// addLoaded adds a bulk load's file to the table and, when something
// reads the output, starts emitting its rows.
func (m *Materialize) addLoaded(f *stream.FreshRows) error {
	if !m.fresh || m.loading != nil {
		return fmt.Errorf("mview: bulk load file %s reached a materialize that cannot take it", f.Loaded.Path)
	}
	if err := m.table.AddLoaded(f.Loaded); err != nil {
		return fmt.Errorf("mview: add bulk load: %w", err)
	}
	if m.downstream.None() {
		return nil
	}
	rows, err := m.table.ReadLoaded(f.Loaded)
	if err != nil {
		return fmt.Errorf("mview: read bulk load: %w", err)
	}
	m.loading = &loadedOutput{rows: rows, idCol: f.IDCol}
	return nil
}

// nextLoaded returns the next chunk of the loaded rows to emit (as fresh
// rows when every dispatcher passes them on unchanged: a batch holds one
// vnode's rows, whose ids rise); ok is false once none is left.
func (m *Materialize) nextLoaded() (msg stream.Message, ok bool, err error) {
	ids, rows, err := m.loading.rows.Next(m.chunkSize)
	if err != nil || len(ids) == 0 {
		if cerr := m.loading.rows.Close(); err == nil {
			err = cerr
		}
		m.loading = nil
		if err != nil {
			return stream.Message{}, false, fmt.Errorf("mview: read bulk load: %w", err)
		}
		return stream.Message{}, false, nil
	}
	f := &stream.FreshRows{IDCol: m.loading.idCol, IDs: ids, Rows: rows}
	if m.downstream.CarriesFresh() {
		return stream.Message{Fresh: f}, true, nil
	}
	c, err := f.Decode(m.schema)
	if err != nil {
		return stream.Message{}, false, fmt.Errorf("mview: decode bulk load: %w", err)
	}
	return stream.ChunkMsg(c), true, nil
}
