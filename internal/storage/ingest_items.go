package storage

import (
	"fmt"

	"github.com/sluice-db/sluice/internal/types"
)

// A bulk epoch into a view with max or min writes a million new keys to
// the aggregate's value table (one per distinct group and value), through
// the epoch's batch: encoded into it, copied into the commit's batch,
// written to the WAL, sorted again as a flushable batch and flushed to
// L0, about a fifth of the load's CPU. Most of those keys are fresh: no
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
// (fresh marks them by position) to a file when they are many
// (Options.IngestFrom), and returns the items left for the batch: the
// others. A fresh key deleted again within the epoch is in neither (no
// layer held it before, none holds it after). With few fresh keys it
// returns items unchanged and no file.
func (t *StateTable) maybeSealFreshItems(epoch uint64, items []overlayItem, fresh types.Bitmap) ([]overlayItem, *ingestFile, error) {
	n := 0
	for i, it := range items {
		if it.row != nil && fresh.Get(i) {
			n++
		}
	}
	if n == 0 || !t.store.ingestEnabled(t.batchSize(items)/len(items)*n) {
		return items, nil, nil
	}
	rest := make([]overlayItem, 0, len(items)-n)
	name := t.store.newIngestFile(epoch, t.lay.desc.ID, t.owner)
	f, err := t.store.writeSST(name, func(add func(k, v []byte) error) error {
		for i, it := range items {
			switch {
			case !fresh.Get(i):
				rest = append(rest, it)
			case it.row != nil:
				v, err := t.lay.encodeValue(t.valScratch[:0], it.row)
				if err != nil {
					return err
				}
				t.valScratch = v
				t.keyScratch = append(t.keyScratch[:0], it.key...)
				if err := add(t.keyScratch, v); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("storage: table %d: write sealed fresh keys: %w", t.lay.desc.ID, err)
	}
	return rest, f, nil
}
