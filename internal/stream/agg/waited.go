package agg

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// A value table's fresh rows (pending.go) cannot be read by Scan until
// their epoch commits: storage keeps them as sorted runs it reads by key
// only. A min or max whose extreme leaves its group in that window must
// scan for the next one, so the table's valueTable keeps each group's
// values written fresh, by group, until the commit, and its scans merge
// them, each read by key for what the table holds of it now, with what
// Scan can read (ScanWithoutFresh).

// waitedSet is the values a value table wrote fresh whose epochs have not
// committed, per epoch, by the key encoding of their group's keys, in key
// order. A group's values are in one epoch's at most (writeFresh).
type waitedSet struct {
	epochs []waitedEpoch
}

type waitedEpoch struct {
	epoch  uint64
	groups map[string]waitedVals
}

// waitedVals is a group's values written fresh: integers unboxed (ints),
// any other type as datums (vals).
type waitedVals struct {
	vals []types.Datum
	ints []int64
}

// forgetCommitted lets the values of committed epochs go.
func (w *waitedSet) forgetCommitted(committed uint64) {
	w.epochs = slices.DeleteFunc(w.epochs, func(e waitedEpoch) bool { return e.epoch <= committed })
}

func (w *waitedSet) empty() bool { return len(w.epochs) == 0 }

// get returns a group's values, if it has any.
func (w *waitedSet) get(groupKey []byte) (waitedVals, bool) {
	for _, e := range w.epochs {
		if vals, ok := e.groups[string(groupKey)]; ok {
			return vals, true
		}
	}
	return waitedVals{}, false
}

// add keeps a group's values written fresh in epoch.
func (w *waitedSet) add(epoch uint64, groupKey []byte, vals waitedVals) {
	if n := len(w.epochs); n == 0 || w.epochs[n-1].epoch != epoch {
		w.epochs = append(w.epochs, waitedEpoch{epoch: epoch, groups: make(map[string]waitedVals)})
	}
	w.epochs[len(w.epochs)-1].groups[string(groupKey)] = vals
}

// groupKey returns the key encoding of a group's keys in the table.
func (v *valueTable) groupKey(group types.Row) ([]byte, error) {
	return codec.EncodeKey(nil, group, v.types[:v.nGroup], v.orders[:v.nGroup])
}

// scanWaited is scan for a table holding fresh rows, which Scan cannot
// read: the rows Scan can read (ScanWithoutFresh) merged in key order with
// the group's values written fresh (v.waited), each as the table holds it
// now (a later write of its key, a row or a delete, is in the rows read,
// and wins).
func (v *valueTable) scanWaited(ctx context.Context, group types.Row, fn func(vals types.Row, n int64) bool) error {
	gk, err := v.groupKey(group)
	if err != nil {
		return err
	}
	// The waited values are read before the scan opens: a commit that
	// lands between the two then shows a row in both (merged as one),
	// where one landing after the scan opened would show it in neither
	// (the scan reads the store as it was; the fresh rows are gone).
	m := waitedMerge{v: v}
	waited, _ := v.waited.get(gk)
	if err := m.readWaited(group, waited); err != nil {
		return err
	}
	it, err := v.t.ScanWithoutFresh(ctx, group)
	if err != nil {
		return fmt.Errorf("agg: value table scan: %w", err)
	}
	defer it.Close()
	return v.visit(ctx, func() (types.Row, bool, error) { return m.next(it) }, fn)
}

// waitedMerge merges a scan with a group's waited values.
type waitedMerge struct {
	v        *valueTable
	scanned  types.Row // the scan's next row, nil when not read
	scanKey  []byte
	scanDone bool
	// wRows are the waited values' rows the table still holds, in key
	// order, wKeys their keys; wRow and wKey the next of them.
	wRows []types.Row
	wKeys [][]byte
	wRow  types.Row
	wKey  []byte
}

// readWaited reads what the table holds now of each of group's waited
// values: a row, or nothing when it was deleted since.
func (m *waitedMerge) readWaited(group types.Row, waited waitedVals) error {
	vals := slices.Clip(waited.vals) // appending must not write into the kept slice
	for _, n := range waited.ints {
		vals = append(vals, n)
	}
	for _, d := range vals {
		pk := append(slices.Clone(group), d)
		row, ok, err := m.v.t.GetUncommitted(pk)
		if err != nil {
			return fmt.Errorf("agg: value table read: %w", err)
		}
		if !ok {
			continue
		}
		key, err := m.v.rowKey(nil, pk)
		if err != nil {
			return err
		}
		m.wRows, m.wKeys = append(m.wRows, row), append(m.wKeys, key)
	}
	return nil
}

// next returns the next row in key order.
func (m *waitedMerge) next(it storage.Iterator) (types.Row, bool, error) {
	if err := m.fillScan(it); err != nil {
		return nil, false, err
	}
	m.fillWaited()
	switch {
	case m.scanned == nil && m.wRow == nil:
		return nil, false, nil
	case m.wRow == nil:
		return m.takeScan(), true, nil
	case m.scanned == nil:
		return m.takeWaited(), true, nil
	}
	switch c := bytes.Compare(m.scanKey, m.wKey); {
	case c < 0:
		return m.takeScan(), true, nil
	case c > 0:
		return m.takeWaited(), true, nil
	default: // the same row from both: the commit took it
		m.wRow = nil
		return m.takeScan(), true, nil
	}
}

func (m *waitedMerge) takeScan() types.Row {
	r := m.scanned
	m.scanned = nil
	return r
}

func (m *waitedMerge) takeWaited() types.Row {
	r := m.wRow
	m.wRow = nil
	return r
}

func (m *waitedMerge) fillScan(it storage.Iterator) error {
	if m.scanned != nil || m.scanDone {
		return nil
	}
	row, ok, err := it.Next()
	if err != nil {
		return fmt.Errorf("agg: value table scan: %w", err)
	}
	if !ok {
		m.scanDone = true
		return nil
	}
	m.scanned = row
	m.scanKey, err = m.v.rowKey(m.scanKey[:0], row[:len(row)-1])
	return err
}

// fillWaited takes the next waited row.
func (m *waitedMerge) fillWaited() {
	if m.wRow == nil && len(m.wRows) > 0 {
		m.wRow, m.wKey = m.wRows[0], m.wKeys[0]
		m.wRows, m.wKeys = m.wRows[1:], m.wKeys[1:]
	}
}

// rowKey appends the key encoding of a value row's key columns.
func (v *valueTable) rowKey(dst []byte, pk types.Row) ([]byte, error) {
	n := len(pk)
	return codec.EncodeKey(dst, pk, v.types[:n], v.orders[:n])
}
