package join

import (
	"context"
	"fmt"

	"github.com/sluice-db/sluice/internal/types"
)

// A probe of a key the cache lacks reads the state table, and most such
// keys have no rows: Nexmark q7 probes every bid's price against the few
// maximum prices of the open windows. A side whose every stored key is
// cached (complete) answers such a probe from memory: a missing key has
// no rows. A side starts complete when its state table is empty (a new
// job; a rebuilt one with state starts incomplete), keeps a new key's
// first row in a cache entry of its own while complete, and stops being
// complete for good when the cache evicts an entry that holds rows (or a
// large key's). Entries deleted with their rows (watermark cleaning) and
// entries emptied by deletes keep it complete; an emptied entry leaves the
// cache (side.remove), so the cache holds the keys that have rows.

// noRows is the entry of a key a complete side has no rows for. It is
// never cached nor written to.
var noRows = &keyEntry{}

// start reads the side's state once, before the join's first row: a side
// with an expiry notes every stored row (expiry.go), and a side whose
// state table holds no row is complete.
func (s *side) start(ctx context.Context) error {
	it, err := s.rows.Scan(ctx, nil)
	if err != nil {
		return fmt.Errorf("join: read state: %w", err)
	}
	any := false
	for {
		row, ok, err := it.Next()
		if err != nil {
			it.Close()
			return fmt.Errorf("join: read state: %w", err)
		}
		if !ok {
			break
		}
		any = true
		if s.expiry == nil {
			break
		}
		s.noteExpiring(row, -1)
	}
	it.Close()
	if any {
		return nil
	}
	s.complete = true
	s.cache.OnEvict(func(_ string, e *keyEntry) {
		if e.large || len(e.rows) > 0 {
			s.complete = false
		}
	})
	return nil
}

// storeNewKey caches a row stored under a key (encoded as k) with no
// cache entry, on a complete side: the key had no rows.
func (s *side) storeNewKey(k []byte, row types.Row, degree int64) error {
	kk := string(k) // before encodePK, which may reuse k's buffer
	pk, err := s.encodePK(row)
	if err != nil {
		return err
	}
	s.cache.Put(kk, &keyEntry{rows: []*storedRow{{pk: string(pk), row: row, degree: degree}}})
	return nil
}
