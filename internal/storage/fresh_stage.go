package storage

import "github.com/sluice-db/sluice/internal/types/codec"

// A sealed file's rows go in key order, vnode first, but fresh rows lie
// in memory in arrival order, where a vnode's rows are one in 256: the
// sstable writer's copy of each row was a cache miss it could not overlap
// with the next (0.17 s per million rows, a tenth of a load into a
// passthrough view). So the rows are first copied, in memory order, into
// a stage laid out in key order, a group of vnodes at a time (stageBytes
// at most, or one vnode), and the writer reads the stage in sequence.
// Each group's pass reads the rows' vnodes again and only its own rows'
// bytes, in rising addresses. It needs the key order to be the stored
// order within each vnode (ids rising across the chunks, as in a bulk
// load); freshSortedOrder says when it is.

// stageBytes bounds the stage a seal fills at a time (a variable for
// tests, which make it small so that a seal takes many groups).
var stageBytes = 4 << 20

// stageOff turns staging off (tests compare both ways).
var stageOff = false

// freshRowsStaged returns a writeSST fill adding the rows of todo in key
// order through the stage.
func (t *StateTable) freshRowsStaged(todo []*freshChunk) func(add func(k, v []byte) error) error {
	return func(add func(k, v []byte) error) error {
		defer func() { t.stage = nil }() // a seal's buffer, not the table's
		var bytesPer, rowsPer [codec.VNodeCount]int
		for _, fc := range todo {
			for k, v := range fc.vnodes {
				bytesPer[v] += int(fc.vals.at[2*k+1] - fc.vals.at[2*k])
				rowsPer[v]++
			}
		}
		for lo := 0; lo < codec.VNodeCount; {
			hi, size, rows := lo, 0, 0
			for hi < codec.VNodeCount && (hi == lo || size+bytesPer[hi] <= stageBytes) {
				size, rows = size+bytesPer[hi], rows+rowsPer[hi]
				hi++
			}
			if err := t.fillStage(todo, lo, hi, size, rows, &bytesPer, &rowsPer, add); err != nil {
				return err
			}
			lo = hi
		}
		return nil
	}
}

// stagedRow is a row's place in the stage: its key and where it ends.
type stagedRow struct {
	id    int64
	end   int
	vnode uint16
}

// fillStage stages the rows of vnodes [lo, hi), size bytes and rows rows
// in all, then adds them in key order.
func (t *StateTable) fillStage(todo []*freshChunk, lo, hi, size, rows int, bytesPer, rowsPer *[codec.VNodeCount]int,
	add func(k, v []byte) error) error {
	var at, rank [codec.VNodeCount]int
	for v, b, r := lo, 0, 0; v < hi; v++ {
		at[v], rank[v] = b, r
		b, r = b+bytesPer[v], r+rowsPer[v]
	}
	if cap(t.stage) < size {
		t.stage = make([]byte, size)
	}
	stage := t.stage[:size]
	placed := make([]stagedRow, rows)
	for _, fc := range todo {
		for k, v := range fc.vnodes {
			if int(v) < lo || int(v) >= hi {
				continue
			}
			n := copy(stage[at[v]:], fc.vals.row(k))
			at[v] += n
			placed[rank[v]] = stagedRow{id: fc.ids[k], end: at[v], vnode: v}
			rank[v]++
		}
	}
	start := 0
	for _, p := range placed {
		key := t.lay.appendIntKey(t.keyScratch[:0], p.vnode, p.id)
		t.keyScratch = key
		if err := add(key, stage[start:p.end]); err != nil {
			return err
		}
		start = p.end
	}
	return nil
}
