package storage

import (
	"bytes"
	"fmt"
	"math"
	"runtime"

	"github.com/sluice-db/sluice/internal/types/codec"
)

// A table's actors get a bulk load's rows as its file (BulkLoad), not as
// rows: the table source stages the file for the epoch that consumes the
// log record naming it (StageLoadedFile), and each actor adds it to its
// table with AddLoaded, so that reads by key find the rows until that
// epoch commits (an UPDATE or DELETE of them in the same epoch), and the
// table's row counts include them. The table writes nothing of the file:
// its chunk is born sealed, at the table's next Seal.

// sealedAtNextSeal is the sealed epoch of a loaded chunk until the table's
// next Seal stamps it: not 0, so every path that writes unsealed fresh
// rows skips it, and above every epoch, so no prune drops it before then.
const sealedAtNextSeal = math.MaxUint64

// AddLoaded makes the rows of f, a bulk load's file of this table, readable
// by key until the commit of the epoch the table seals next, and adds f's
// rows of the table's vnodes to its row counts (when it keeps them). It
// opens the file at once: the log may remove its name before the commit
// (truncation, a sweep), and the open reader keeps it readable.
func (t *StateTable) AddLoaded(f *LoadedFile) error {
	if t.broken != nil {
		return t.broken
	}
	p := tablePrefix(t.lay.desc.ID)
	if t.freshByKey() || len(f.Counts) != codec.VNodeCount || !bytes.HasPrefix(f.LoKey, p) || !bytes.HasPrefix(f.HiKey, p) {
		return fmt.Errorf("storage: table %d: bulk load file %s is not one of this table's", t.lay.desc.ID, f.Path)
	}
	r, err := t.store.openSST(f.Path)
	if err != nil {
		return fmt.Errorf("storage: table %d: open bulk load file: %w", t.lay.desc.ID, err)
	}
	t.maybePrune()
	owned := int64(0)
	for _, v := range t.owned {
		owned += f.Counts[v]
	}
	opened := &openedReader{r: r}
	sf := &spillFile{path: f.Path, reader: r, opened: opened}
	runtime.AddCleanup(sf, (*openedReader).close, opened)
	t.fresh = append(t.fresh, freshChunk{spill: sf, lo: f.LoID, hi: f.HiID,
		n: int(owned), sealed: sealedAtNextSeal})
	if t.rc.on {
		for _, v := range t.owned {
			if c := f.Counts[v]; c != 0 {
				t.rc.n[v] += c
				t.rc.mark(v)
			}
		}
	}
	return nil
}

// stampLoaded seals the loaded chunks in epoch.
func (t *StateTable) stampLoaded(epoch uint64) {
	for i := range t.fresh {
		if t.fresh[i].sealed == sealedAtNextSeal {
			t.fresh[i].sealed = epoch
		}
	}
}
