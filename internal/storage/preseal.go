package storage

import (
	"bytes"
	"runtime"
	"time"
)

// A stuck epoch (a join emitting millions of rows for one input row) piles
// its output into the materialize's fresh rows, and when the barrier comes
// at last (the job paused, the barrier overtaking its queued input), the
// seal wrote all of them to the epoch's file before the epoch could
// commit: 2.7 M rows held the commit for 0.35 s after PAUSE, and every
// other view's freshness with it. The rows were the stall's output made
// durable, not a wait for data, but the wait grew with how long the stall
// ran.
//
// So a table whose epoch has run longer than the store's presealAfter
// (twice the barrier interval, by the engine) writes its fresh rows to a
// file as they come, each time presealFrom bytes of them are not yet in
// one: the file is sorted and complete, what its seal would have written
// for those rows, but the epoch is not over. The chunks then read their
// rows from it, their memory let go. The seal writes only the rows since
// the last such file and stages them all for the commit, which ingests
// them like any seal's files (ingest.go): fresh rows are keys no row held,
// so files of one epoch hold distinct keys and their order does not
// matter, and the crash-atomic steps are the same, the intent naming
// every file.
//
// The files of an epoch overlap one another (every file spans all the
// vnodes), so the commit ingests each in a call of its own, and Pebble
// places them in descending levels and then in L0. Files of a long stall
// are merged as they accumulate (preseal_merge.go) to keep their number
// small.
//
// Rows that overwrite (OverwriteFresh) stop an epoch's presealing: their
// epoch's rows go to its batch (maybeSealFreshFile). A bulk load's own
// table never preseals: it builds one file.

// presealFrom is the fresh bytes, not yet in a file, that a late epoch's
// table writes to one: the most its seal then writes (a variable for
// tests).
var presealFrom = 512 << 10

// maybePreseal writes the unsealed fresh rows not yet in a file to one,
// when the table's epoch is late and they are at least presealFrom bytes.
func (t *StateTable) maybePreseal() error {
	s := t.store
	if t.pre != nil && t.pre.merge != nil {
		t.pollMerge(false)
		t.maybeStartMerge()
	}
	if s.presealAfter <= 0 || s.ingestFrom <= 0 || t.noPreseal || t.freshSince.IsZero() ||
		time.Since(t.freshSince) < s.presealAfter || t.idsDescend() || t.hasUnsealedOverwrites() {
		return nil
	}
	todo := t.unsealedFresh()
	if freshPendingBytes(todo) < t.presealSize() {
		return nil
	}
	return t.preseal(todo)
}

// presealSize is the bytes a table writes to its next file: presealFrom,
// doubled for every 2·mergeFanout files of level 0 the merges have not
// taken yet. When the merges fall behind a fast stall (they share the
// cores with it), bigger files keep the commit's files few (each an
// Ingest call of its own, and an L0 sublevel), at the price of a bigger
// remainder for the seal.
func (t *StateTable) presealSize() int {
	if t.pre == nil {
		return presealFrom
	}
	n := 0
	for _, e := range t.pre.files {
		if e.level == 0 {
			n++
		}
	}
	return presealFrom << min(n/(2*mergeFanout), 6)
}

// freshPendingBytes is the encoded bytes of todo's rows, in memory or
// spilled.
func freshPendingBytes(todo []*freshChunk) int {
	n := 0
	for _, fc := range todo {
		n += fc.encodedBytes() // 0 when spilled
	}
	for _, sf := range spillsOf(todo) {
		n += int(sf.size)
	}
	return n
}

// preseal writes the rows of todo to a new file of the unsealed epoch,
// which the chunks then read from.
func (t *StateTable) preseal(todo []*freshChunk) error {
	f, err := t.writeFreshFile(t.store.newIngestFile(t.lastSealed+1, t.lay.desc.ID, t.owner), todo)
	if err != nil {
		return err
	}
	if t.pre == nil {
		t.pre = &presealFiles{fs: t.store.fs}
		runtime.AddCleanup(t, (*presealFiles).removeAll, t.pre)
	}
	sf := &spillFile{path: f.path}
	var bufs [][]byte
	for _, fc := range todo {
		if fc.spill == nil {
			t.held().Add(-int64(fc.bytes()))
			if t.spilled != nil && cap(fc.vals.buf) > 0 {
				bufs = append(bufs, fc.vals.buf)
			}
		}
		fc.vals = encodedRows{}
	}
	t.giveSpilled(bufs)
	t.replaceFresh(todo, presealedChunk(sf, todo))
	t.addPresealed(f, sf)
	return nil
}

// presealedChunk is one chunk standing for the rows of parts, written to
// sf: their key range and count. A stall's thousands of chunks would
// otherwise stay in the table's list, which every insert walks.
func presealedChunk(sf *spillFile, parts []*freshChunk) freshChunk {
	p0 := parts[0]
	fc := freshChunk{spill: sf, presealed: true, byKey: p0.byKey, lo: p0.lo, hi: p0.hi, loKey: p0.loKey, hiKey: p0.hiKey}
	for _, p := range parts {
		fc.n += p.n
		fc.lo, fc.hi = min(fc.lo, p.lo), max(fc.hi, p.hi)
		if bytes.Compare(p.loKey, fc.loKey) < 0 {
			fc.loKey = p.loKey
		}
		if bytes.Compare(p.hiKey, fc.hiKey) > 0 {
			fc.hiKey = p.hiKey
		}
	}
	return fc
}

// replaceFresh puts with where the first chunk of parts (pointers into
// t.fresh) is, and drops the others.
func (t *StateTable) replaceFresh(parts []*freshChunk, with freshChunk) {
	drop := make(map[*freshChunk]bool, len(parts))
	for _, p := range parts {
		drop[p] = true
	}
	out := make([]freshChunk, 0, len(t.fresh)-len(parts)+1)
	placed := false
	for i := range t.fresh {
		switch {
		case !drop[&t.fresh[i]]:
			out = append(out, t.fresh[i])
		case !placed:
			out, placed = append(out, with), true
		}
	}
	t.fresh = out
}

// stagePresealed hands the files written for the epoch being sealed to
// sb and marks their chunks sealed in epoch.
func (t *StateTable) stagePresealed(sb *stagedBatch, epoch uint64) {
	if t.pre == nil {
		return
	}
	t.pollMerge(true)
	for i := range t.fresh {
		if fc := &t.fresh[i]; fc.presealed {
			fc.presealed, fc.sealed = false, epoch
		}
	}
	for _, e := range t.pre.files {
		sb.files = append(sb.files, e.f)
	}
	t.pre.files = nil
}

// notePresealClock starts the epoch's clock at its first fresh rows.
func (t *StateTable) notePresealClock() {
	if t.freshSince.IsZero() && t.store.presealAfter > 0 {
		t.freshSince = time.Now()
	}
}
