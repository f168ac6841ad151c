package storage

import (
	"hash/maphash"
	"slices"
	"unsafe"

	"github.com/RaduBerinde/btreemap"

	"github.com/sluice-db/sluice/internal/types"
)

// overlay holds a StateTable's uncommitted writes: the unsealed writes of
// the current epoch and, per sealed but not yet committed epoch, a sorted
// run of that epoch's writes. Newer layers shadow older ones.
//
// Why this shape: in steady state every key an executor keeps hot is
// written once per epoch and committed an epoch later. A single ordered
// tree paid an insert per key per epoch plus a lookup and a delete at
// prune. Here an unsealed write is one hash-map probe, a seal sorts the
// epoch's keys once (the Pebble batch is then written in key order), and a
// commit drops whole runs without looking at their keys.
//
// Scans need the unsealed writes in order; order keeps it, lazily, only
// once a scan asks (overlay_order.go). A table that is only read by point
// lookups never sorts its unsealed writes before the seal.
type overlay struct {
	seed    maphash.Seed // of every index's key hashes (keyHash)
	pending keyIndex     // unsealed key → position in items (overlay_index.go)
	items   itemLog      // unsealed writes, in first-write order (overlay_items.go)
	order   keyOrder
	runs    []sealedRun
	spare   itemLog  // a pruned run's pages, for the next epoch's writes
	spareIx keyIndex // a pruned run's index, for the next epoch's keys

	srcScratch  [][]overlayItem // see gather
	pendScratch []overlayItem
	sortKeys    []sortKey // see sortedItems
	sortTmp     []sortKey // sortKeys's scratch

	// fresh marks the unsealed items, by position in items, whose key no
	// layer held when the epoch first wrote it (putFresh); lastFresh is
	// the same for the run the last seal made, by position in that run.
	fresh     types.Bitmap
	lastFresh types.Bitmap

	// encWritten and encRun are sealEncoded's buffers
	// (overlay_values.go).
	encWritten sealedKVs
	encRun     sealedKVs

	// lastSealed is the last epoch's size: it lets one huge epoch's
	// buffers go once epochs are small again.
	lastSealed int
}

// retainItems is how many items' worth of buffers a table keeps between
// epochs however small they get: reuse pays in steady state, but a single
// huge epoch (a bulk INSERT) must not pin its buffers for the table's life.
const retainItems = 1 << 14

// oversized reports whether a buffer of capacity c is worth releasing when
// the epochs using it hold n items.
func oversized(c, n int) bool { return c > retainItems && n*4 < c }

// overlayItem is one uncommitted write: a row, or a tombstone (row nil).
type overlayItem struct {
	key string
	row types.Row
}

// sealedRun is one sealed, uncommitted epoch's writes: the epoch's items
// as they were written, index, the epoch's index of them (point lookups),
// and order, their positions in key order (scans). The
// items are not gathered into key order: that read a bulk epoch's million
// 40-byte items at random, and the seal itself needs only their encodings
// (sealEncoded). Lookups and scans until the commit read through order.
type sealedRun struct {
	epoch   uint64
	log     itemLog
	index   keyIndex
	order   []int32
	scratch []overlayItem // span's result
}

func (r *sealedRun) len() int { return len(r.order) }

// item returns the run's j-th item in key order.
func (r *sealedRun) item(j int) *overlayItem { return r.log.at(r.order[j]) }

func newOverlay() *overlay {
	return &overlay{seed: maphash.MakeSeed(), pending: newKeyIndex(0)}
}

// keyHash is a key's hash under the overlay's seed. A caller that looks a
// key up in several layers, or looks it up and then writes it, hashes it
// once and passes the hash to the ...H methods.
func (o *overlay) keyHash(key []byte) uint64 { return hashKey(o.seed, key) }

// put records row (nil = tombstone) under key; key is copied if new.
func (o *overlay) put(key []byte, row types.Row) { o.putH(o.keyHash(key), key, row) }

func (o *overlay) putH(h uint64, key []byte, row types.Row) {
	if i, ok := o.pending.find(h, &o.items, key); ok {
		o.items.at(i).row = row
		return
	}
	o.putAbsentH(h, key, row)
}

// putString is put of a key held as a string, which the overlay keeps
// rather than copies (DeleteBetween's keys, most of them the overlay's
// own).
func (o *overlay) putString(k string, row types.Row) {
	key := unsafe.Slice(unsafe.StringData(k), len(k)) // read, never written
	h := o.keyHash(key)
	if i, ok := o.pending.find(h, &o.items, key); ok {
		o.items.at(i).row = row
		return
	}
	o.putAbsentString(h, k, row)
}

// putAbsentH is putH of a key the caller knows has no unsealed write (one
// lookup fewer: a value table's AddCount looked already).
func (o *overlay) putAbsentH(h uint64, key []byte, row types.Row) {
	o.putAbsentString(h, string(key), row)
}

func (o *overlay) putAbsentString(h uint64, k string, row types.Row) {
	i := o.items.add(overlayItem{key: k, row: row})
	o.pending.insert(h, i)
	o.noteWrite(k, i)
}

// putFreshH is putAbsentH of a key that no layer holds: the committed
// state has no row of it, and no sealed run a row or a tombstone. A seal
// may write such keys to a file the commit ingests (maybeSealFreshItems).
func (o *overlay) putFreshH(h uint64, key []byte, row types.Row) {
	o.fresh.Set(o.items.len())
	o.putAbsentH(h, key, row)
}

// unsealedRowH returns the unsealed write (nil for a tombstone) of key,
// whose hash is h, if any. The row is the overlay's own: a caller may
// update it in place.
func (o *overlay) unsealedRowH(h uint64, key []byte) (types.Row, bool) {
	i, ok := o.pending.find(h, &o.items, key)
	if !ok {
		return nil, false
	}
	return o.items.at(i).row, true
}

// get returns the newest uncommitted write of key, if any.
func (o *overlay) get(key []byte) (overlayItem, bool) {
	h := o.keyHash(key)
	if i, ok := o.pending.find(h, &o.items, key); ok {
		return *o.items.at(i), true
	}
	return o.sealedGetH(h, key)
}

// sealedGetH returns the newest sealed, uncommitted write of key, whose
// hash is h, if any.
func (o *overlay) sealedGetH(h uint64, key []byte) (overlayItem, bool) {
	for r := len(o.runs) - 1; r >= 0; r-- {
		if i, ok := o.runs[r].index.find(h, &o.runs[r].log, key); ok {
			return *o.runs[r].log.at(i), true
		}
	}
	return overlayItem{}, false
}

// fillErr implements overlaySource: an overlay of rows never fails.
func (o *overlay) fillErr() error { return nil }

// empty reports whether the overlay holds no write at all.
func (o *overlay) empty() bool {
	if o.items.len() > 0 {
		return false
	}
	// A seal makes a run even of no writes (an epoch of fresh rows only):
	// it holds none, and must not keep a table from taking fresh rows
	// until it commits (HoldsNoWrites).
	for i := range o.runs {
		if o.runs[i].len() > 0 {
			return false
		}
	}
	return true
}

// hasUnsealed reports whether any write awaits a seal.
func (o *overlay) hasUnsealed() bool { return o.items.len() > 0 }

// len counts buffered writes; a key written in several epochs counts once
// per epoch.
func (o *overlay) len() int {
	n := o.items.len()
	for i := range o.runs {
		n += o.runs[i].len()
	}
	return n
}

// seal moves the unsealed writes into a run for epoch and returns it.
// The caller must not keep the run past the next seal or prune.
func (o *overlay) seal(epoch uint64) *sealedRun {
	order := o.sealOrder()
	o.forgetDead()
	o.runs = append(o.runs, sealedRun{epoch: epoch, log: o.items, index: o.pending, order: order})
	o.sealFreshBits(order)
	// The run keeps the items' pages and their index; the next epoch's
	// writes go to a pruned run's, if there is one. Buffers are sized by
	// the items written, the dead ones too.
	n := o.items.len()
	o.lastSealed = n
	o.items, o.spare = o.spare, itemLog{}
	o.pending, o.spareIx = o.nextIndex(n), keyIndex{}
	if oversized(cap(o.sortKeys), n) {
		o.sortKeys = nil
	}
	if oversized(cap(o.sortTmp), n) {
		o.sortTmp = nil
	}
	o.resetOrder(n)
	return &o.runs[len(o.runs)-1]
}

// nextIndex returns an empty index for an epoch expected to write about
// as many keys as the last, n: a pruned run's, unless that one was sized
// for a much bigger epoch.
func (o *overlay) nextIndex(n int) keyIndex {
	x := o.spareIx
	if x.slots == nil || oversized(len(x.slots)/2, n) {
		return newKeyIndex(n)
	}
	x.reset()
	return x
}

// sealOrder returns the positions of the unsealed items the run keeps
// (sealsItem), in key order, in a new slice. An epoch that was scanned has
// sorted most of its items already (keyOrder): the seal merges in the
// rest, or walks the tree, rather than sorting all of them again.
func (o *overlay) sealOrder() []int32 {
	ko := &o.order
	if ko.tree != nil { // it orders every unsealed item
		order := make([]int32, 0, o.items.len())
		for _, i := range ko.tree.Ascend(btreemap.Min[string](), btreemap.Max[string]()) {
			order = append(order, i)
		}
		return o.dropDead(order)
	}
	if ko.covered > 0 {
		n := o.items.len()
		ko.fresh = o.sortedRange(ko.fresh[:0], ko.covered, n)
		order := make([]int32, 0, n)
		if len(ko.fresh)*8 > ko.covered {
			return o.dropDead(o.mergeLinear(order, ko.sorted, ko.fresh))
		}
		return o.dropDead(o.mergeSearch(order, ko.sorted, ko.fresh))
	}
	keys := o.sortedKeys()
	order := make([]int32, len(keys))
	for j, k := range keys {
		order[j] = k.pos
	}
	return order
}

// A key no layer held when its epoch first wrote it (putFresh) and that
// the epoch deleted again is in no layer after the epoch either: the run
// leaves it out, unsorted and unencoded. A join side whose rows expire
// within the epoch they came in (Nexmark q4's and q7's bids, when event
// time runs ahead of the barrier interval) had most of each seal's items
// such, and sorted and encoded them only for the batch to skip them.
//
// The item stays in the run's log and index, but with its key cleared
// (forgetDead), so that no lookup finds it: a run of only such items
// holds no writes (empty), and a caller may then keep a later epoch's
// row of the key as a fresh row, which a tombstone found in the run would
// hide.

// sealsItem reports whether the unsealed item at pos belongs in its
// epoch's run: all but fresh keys deleted again.
func (o *overlay) sealsItem(pos int32) bool {
	return !o.fresh.Get(int(pos)) || o.items.at(pos).row != nil
}

// forgetDead clears the keys of the unsealed items the run leaves out: no
// key is empty (each starts with its table's prefix), so the index finds
// them no more. The seal calls it once the order is made.
func (o *overlay) forgetDead() {
	if !o.fresh.Any() {
		return
	}
	for p, page := range o.items.pages {
		for j := range page {
			if !o.sealsItem(int32(p<<itemPageBits + j)) {
				page[j].key = ""
			}
		}
	}
}

// dropDead removes from order, in place, the items the run leaves out.
func (o *overlay) dropDead(order []int32) []int32 {
	if !o.fresh.Any() {
		return order
	}
	return slices.DeleteFunc(order, func(pos int32) bool { return !o.sealsItem(pos) })
}

// sealFreshBits moves the fresh marks of the items the last seal sealed,
// whose positions order lists, to lastFresh, in the run's order.
func (o *overlay) sealFreshBits(order []int32) {
	clear(o.lastFresh)
	o.lastFresh = o.lastFresh[:0]
	if !o.fresh.Any() {
		return
	}
	for i, pos := range order {
		if o.fresh.Get(int(pos)) {
			o.lastFresh.Set(i)
		}
	}
	clear(o.fresh)
	o.fresh = o.fresh[:0]
}

// sealedFresh marks the items of the run the last seal returned whose
// keys were fresh (putFresh), by position in the run.
func (o *overlay) sealedFresh() types.Bitmap { return o.lastFresh }

// prune drops the runs of epochs ≤ committed: Pebble has them now. No
// iterator may be open (their Pebble view may predate the commit). The
// largest dropped run's pages are kept for a later epoch's writes.
func (o *overlay) prune(committed uint64) {
	n := 0
	for n < len(o.runs) && o.runs[n].epoch <= committed {
		l := o.runs[n].log
		if c := l.capacity(); c > o.spare.capacity() && !oversized(c, o.lastSealed) {
			l.reset(c)
			o.spare = l
		}
		if x := o.runs[n].index; len(x.slots) > len(o.spareIx.slots) && !oversized(len(x.slots)/2, o.lastSealed) {
			o.spareIx = x
		}
		n++
	}
	if n == 0 {
		return
	}
	o.runs = slices.Delete(o.runs, 0, n)
	if o.items.len() == 0 && o.spare.capacity() > o.items.capacity() {
		o.items, o.spare = o.spare, o.items
	}
}
