package storage

import (
	"fmt"
	"math"

	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// LoadedRows reads the rows of a bulk load's file that lie in a table's
// vnodes, in key order, a batch at a time: what a table's materialize
// emits of a load when something reads its output (a view created after
// the statement, before its epoch). The table must have added the file
// (AddLoaded), whose open reader it uses, so the rows stay readable if the
// log removes the file's name meanwhile.
type LoadedRows struct {
	t      *StateTable
	r      *sstable.Reader
	vnodes []uint16 // left to read, ascending; the first is open in it
	it     sstable.Iterator
	// started: it was positioned; pend is the row it stands on, not yet
	// returned.
	started bool
	done    bool // it has no row left
	pend    bool
	k, v    []byte
}

// ReadLoaded returns a reader of f's rows of the table's vnodes.
func (t *StateTable) ReadLoaded(f *LoadedFile) (*LoadedRows, error) {
	var r *sstable.Reader
	for i := range t.fresh {
		if sf := t.fresh[i].spill; sf != nil && sf.path == f.Path && sf.reader != nil {
			r = sf.reader
		}
	}
	if r == nil {
		return nil, fmt.Errorf("storage: table %d: bulk load file %s read before it was added", t.lay.desc.ID, f.Path)
	}
	l := &LoadedRows{t: t, r: r}
	for _, v := range t.owned {
		if f.Counts[v] > 0 {
			l.vnodes = append(l.vnodes, v)
		}
	}
	return l, nil
}

// Next returns up to max rows' ids and values (value encoding of the
// table's rows), in a buffer of their own, so a caller may keep them; no
// rows once every one was returned. The rows of one call are of one
// vnode, so their ids rise.
func (l *LoadedRows) Next(max int) ([]int64, EncodedRows, error) {
	var ids []int64
	var rows EncodedRows
	for len(ids) < max {
		ok, err := l.peekOpen()
		if err != nil {
			return nil, EncodedRows{}, err
		}
		if !ok && len(ids) > 0 {
			break // one vnode a call
		}
		if !ok {
			if ok, err = l.peek(); err != nil || !ok {
				return ids, rows, err
			}
		}
		k, v := l.k, l.v
		id, ok := codec.KeyInt64(k[min(len(k), stateKeyHeaderLen):], l.t.lay.pkOrders[0])
		if !ok || len(rows.Buf) > math.MaxUint32/2 {
			return nil, EncodedRows{}, fmt.Errorf("storage: table %d: bulk load file holds key %x", l.t.lay.desc.ID, k)
		}
		start := uint32(len(rows.Buf))
		rows.Buf = append(rows.Buf, v...)
		rows.Spans = append(rows.Spans, start, uint32(len(rows.Buf)))
		ids = append(ids, id)
		l.pend = false
	}
	return ids, rows, nil
}

// peek puts the row Next returns next in k and v, which stay valid until
// the iterator moves, opening the next vnode's iterator when one ends; ok
// is false when no row is left.
func (l *LoadedRows) peek() (ok bool, err error) {
	if l.pend {
		return true, nil
	}
	for {
		if ok, err := l.peekOpen(); err != nil || ok {
			return ok, err
		}
		if err := l.Close(); err != nil {
			return false, err
		}
		if len(l.vnodes) == 0 {
			return false, nil
		}
		if err := l.open(); err != nil {
			return false, err
		}
	}
}

// peekOpen is peek within the open vnode: ok is false when it has no
// row left (or none is open).
func (l *LoadedRows) peekOpen() (ok bool, err error) {
	if l.pend {
		return true, nil
	}
	if l.it == nil || l.done {
		return false, nil
	}
	next := l.it.First
	if l.started {
		next = l.it.Next
	}
	kv := next()
	l.started = true
	if kv == nil {
		l.done = true
		return false, nil
	}
	if l.v, _, err = kv.Value(nil); err != nil {
		return false, err
	}
	l.k, l.pend = kv.K.UserKey, true
	return true, nil
}

// open opens the iterator of the next vnode.
func (l *LoadedRows) open() error {
	v := l.vnodes[0]
	l.vnodes = l.vnodes[1:]
	lo := appendVNodePrefix(nil, l.t.lay.desc.ID, v)
	hi := tablePrefix(l.t.lay.desc.ID + 1)
	if v < math.MaxUint16 {
		hi = appendVNodePrefix(nil, l.t.lay.desc.ID, v+1)
	}
	it, err := l.r.NewIter(sstable.NoTransforms, lo, hi, sstable.AssertNoBlobHandles)
	if err != nil {
		return err
	}
	l.it, l.started, l.done = it, false, false
	return nil
}

// Close closes the open iterator, if any (Next opens another if rows are
// left).
func (l *LoadedRows) Close() error {
	if l.it == nil {
		return nil
	}
	err := l.it.Close()
	l.it, l.pend = nil, false
	return err
}
