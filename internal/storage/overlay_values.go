package storage

import (
	"errors"
	"math"

	"github.com/sluice-db/sluice/internal/types"
)

// A seal writes its run in key order, and encoding each item there read
// the items' keys and rows in key order too: an aggregate's value table
// seals a million rows allocated in the order they were written, so
// nearly every key, row and boxed datum read was a cache miss (a quarter
// of BenchmarkBulkMultisetEpoch). sealEncoded copies each key and encodes
// each row in the order they were written, into one buffer, and only then
// gathers them into key order, reading a buffer a fraction the size of
// the keys and rows it came from.

// sealedKVs is the keys and encoded values of a run: item j's key is
// buf[at[3j]:at[3j+1]], its value buf[at[3j+1]:at[3j+2]] (empty for a
// tombstone: an encoded row is never empty).
type sealedKVs struct {
	buf []byte
	at  []uint32
}

// key returns item j's key.
func (v *sealedKVs) key(j int) []byte { return v.buf[v.at[3*j]:v.at[3*j+1]] }

// value returns item j's encoded value (empty: a tombstone).
func (v *sealedKVs) value(j int) []byte { return v.buf[v.at[3*j+1]:v.at[3*j+2]] }

// len returns the number of items.
func (v *sealedKVs) len() int { return len(v.at) / 3 }

// tombstone reports whether item j deletes its key.
func (v *sealedKVs) tombstone(j int) bool { return v.at[3*j+1] == v.at[3*j+2] }

// entry returns item j's key and value together, as one span.
func (v *sealedKVs) entry(j int) []byte { return v.buf[v.at[3*j]:v.at[3*j+2]] }

// sealEncoded is seal that also returns the run's keys and its rows
// encoded with enc, in the run's order, valid until the next seal.
func (o *overlay) sealEncoded(epoch uint64, enc func([]byte, types.Row) ([]byte, error)) (*sealedRun, *sealedKVs, error) {
	o.releaseEncoded(o.items.len())
	if err := o.encodeWritten(enc); err != nil {
		return nil, nil, err
	}
	r := o.seal(epoch)
	written, run := &o.encWritten, &o.encRun
	run.buf = grown(run.buf[:0], len(written.buf))
	run.at = grown(run.at[:0], 3*len(r.order))
	for _, k := range r.order {
		start := uint32(len(run.buf))
		run.buf = append(run.buf, written.entry(int(k))...)
		keyLen := written.at[3*k+1] - written.at[3*k]
		run.at = append(run.at, start, start+keyLen, uint32(len(run.buf)))
	}
	return r, run, nil
}

// encodeWritten encodes the unsealed items' keys and rows, in write
// order, into encWritten.
func (o *overlay) encodeWritten(enc func([]byte, types.Row) ([]byte, error)) error {
	n := o.items.len()
	written := &o.encWritten
	written.buf, written.at = written.buf[:0], grown(written.at[:0], 3*n)
	i, sized, anyFresh := 0, false, o.fresh.Any()
	live := n
	if anyFresh {
		live -= o.deadItems()
	}
	for _, page := range o.items.pages {
		for j := range page {
			it := &page[j]
			if !sized && len(written.buf) > 0 { // one allocation for a bulk epoch's buffer
				written.buf = grown(written.buf, len(written.buf)*live*5/4)
				sized = true
			}
			i++
			start := len(written.buf)
			if anyFresh && !o.sealsItem(int32(i-1)) { // not in the run: no bytes
				written.at = append(written.at, uint32(start), uint32(start), uint32(start))
				continue
			}
			written.buf = append(written.buf, it.key...)
			mid := len(written.buf)
			if it.row != nil {
				var err error
				if written.buf, err = enc(written.buf, it.row); err != nil {
					return err
				}
				if len(written.buf) == mid {
					return errors.New("a row encoded to no bytes, which reads as a tombstone")
				}
			}
			if len(written.buf) > math.MaxUint32 {
				return errors.New("an epoch's writes to one table exceed 4 GiB")
			}
			written.at = append(written.at, uint32(start), uint32(mid), uint32(len(written.buf)))
		}
	}
	return nil
}

// deadItems counts the unsealed items the run leaves out (sealsItem).
func (o *overlay) deadItems() int {
	dead := 0
	for i := range o.items.len() {
		if o.fresh.Get(i) && o.items.at(int32(i)).row == nil {
			dead++
		}
	}
	return dead
}

// grown is s with room for n more elements. Unlike slices.Grow it does
// not clear the room (append of a made slice does), so the pages of a
// large new buffer are first touched when written: a seal's buffers,
// sized for the epoch, are most of what a short run allocates, and
// clearing them was a twentieth of Nexmark q5's CPU.
func grown[T any](s []T, n int) []T {
	if cap(s)-len(s) >= n {
		return s
	}
	g := make([]T, len(s), len(s)+n)
	copy(g, s)
	return g
}

// releaseEncoded lets the buffers of one huge epoch go, before they are
// filled, once epochs of n items are much smaller.
func (o *overlay) releaseEncoded(n int) {
	for _, v := range []*sealedKVs{&o.encWritten, &o.encRun} {
		if oversized(cap(v.at), 3*n) {
			v.at = nil
		}
		if oversized(cap(v.buf), 32*n) {
			v.buf = nil
		}
	}
}
