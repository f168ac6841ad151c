package storage

import "github.com/sluice-db/sluice/internal/types"

// overlayGet looks a full key up in the overlay. Once the owner's writes
// are committed and pruned the overlay is empty and the lookup is skipped.
func (t *StateTable) overlayGet(key []byte) (overlayItem, bool) {
	if t.overlay.empty() {
		return overlayItem{}, false
	}
	return t.overlay.get(key)
}

// scratchPK returns row's primary key in a buffer reused by every call, for
// callers that only encode it (write does: the overlay keeps the encoded
// key, never the PK row).
func (t *StateTable) scratchPK(row types.Row) types.Row {
	pk := t.pkScratch[:0]
	for _, c := range t.lay.desc.PK {
		pk = append(pk, row[c])
	}
	t.pkScratch = pk
	return pk
}
