package storage

import (
	"fmt"

	"github.com/sluice-db/sluice/internal/types"
)

// A bulk epoch into a view with max or min writes a million new keys to
// the aggregate's value table (one per distinct group and value), through
// the epoch's batch: encoded into it, copied into the commit's batch,
// written to the WAL, sorted again as a flushable batch and flushed to
// L0 (a third of BenchmarkBulkMultisetEpoch's CPU: 1.86 s per million
// keys that way, 1.24 s through a file). Most of those keys are fresh: no
// layer held them when the epoch first wrote them (overlay.putFresh).
// Fresh keys can take the path of fresh rows (ingest.go): a file the
// commit ingests ahead of the batch. The two reasons that path is sound
// hold for them too:
//
//   - Undo after a crash deletes every key of the file. A fresh key has no
//     committed row, so deleting it restores the committed state.
//   - Ingested rows are older than every batch write committed with them.
//     No epoch committed together with this one wrote the key before it
//     (a sealed run of it would have made the key not fresh), and this
//     epoch's own write of it is in the file, not the batch; so every
//     batch write of the key is a later epoch's, and newer.

// maybeSealFreshItems writes the sealed run's fresh keys that hold a row
// (fresh marks them by position; vals holds the run's encoded values) to
// a file when they are many (Options.IngestFrom). It returns the items
// the batch must then leave out, byFile: those written. With few fresh
// keys it returns no file and no items. (Fresh keys deleted again within
// the epoch are not in the run at all: overlay.sealsItem.)
func (t *StateTable) maybeSealFreshItems(epoch uint64, vals *sealedKVs, fresh types.Bitmap) (byFile types.Bitmap, f *ingestFile, err error) {
	n, size := 0, 0
	for j := range vals.len() {
		if !vals.tombstone(j) && fresh.Get(j) {
			n++
			size += len(vals.entry(j))
		}
	}
	if n == 0 || !t.store.ingestEnabled(size) {
		return nil, nil, nil
	}
	byFile = fresh.Clone()
	name := t.store.newIngestFile(epoch, t.lay.desc.ID, t.owner)
	f, err = t.store.writeSST(name, &t.store.writerOpts, func(add func(k, v []byte) error) error {
		for j := range vals.len() {
			if vals.tombstone(j) || !fresh.Get(j) {
				continue
			}
			if err := add(vals.key(j), vals.value(j)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("storage: table %d: write sealed fresh keys: %w", t.lay.desc.ID, err)
	}
	return byFile, f, nil
}
