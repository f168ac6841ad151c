package engine

import (
	"fmt"
	"log/slog"
	"sync/atomic"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/types"
)

// inconsistentLogged bounds the Warn lines: the first few name the view
// and key to start a diagnosis from; the counter carries the rest.
const inconsistentLogged = 10

// inconsistencyCounter counts changes a materialized view's materialize
// found contradicting its stored rows (a delete of a key it does not hold,
// a delete of a different row, an insert of a key it holds). Each is an
// upstream bug applied tolerantly, so without the count it would be silent.
type inconsistencyCounter struct {
	n   atomic.Uint64
	log *slog.Logger
	cat *catalog.Catalog
}

func (c *inconsistencyCounter) add(table uint32, kind string, key types.Row) {
	if c.n.Add(1) > inconsistentLogged {
		return
	}
	c.log.Warn("stream inconsistency in a materialized view, applied tolerantly (an upstream operator lost or reordered a change)",
		"view", c.viewName(table), "table", table, "kind", kind, "key", fmt.Sprint(key))
}

func (c *inconsistencyCounter) load() uint64 { return c.n.Load() }

// viewName finds the relation whose table is table (only for the first few
// reports, so the scan of the catalog does not matter).
func (c *inconsistencyCounter) viewName(table uint32) string {
	if c.cat == nil {
		return "?"
	}
	for _, r := range c.cat.All() {
		if r.Table.ID == table {
			return r.Name
		}
	}
	return "?"
}

// InconsistentOps returns how many changes materialized views (and
// primary-key tables, whose writers check their keys) received that
// contradicted their stored rows (sluice_stream_inconsistent_ops_total). It
// is 0 unless an operator upstream lost or reordered changes.
func (e *Engine) InconsistentOps() uint64 { return e.inconsistent.load() }
