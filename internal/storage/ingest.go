package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/sstable"
)

// A bulk epoch (a million-row COPY) used to reach Pebble as one batch of
// every row it wrote: the batch went through the WAL, into a memtable,
// was flushed to L0 and then compacted down, writing each row three or
// four times and holding the whole epoch in memory twice on the way. Now a
// state table whose sealed fresh rows are large writes them to an sstable
// file instead (sealFreshFile), and the commit ingests those files
// (Pebble's Ingest): a new table's rows land in the bottom level once.
//
// Ingesting the files before the batch makes their rows older than every
// batch write committed with them, which is right: fresh rows are of keys
// no row held when they were written (InsertFresh), so any batch write of
// one, in this epoch or a later one committed together, came after it. An
// earlier epoch committed together cannot hold one in its batch either:
// no key of a fresh run has an uncommitted write in any layer when the run
// is taken (HoldsNoWrites, or InsertFreshUnwritten's check of the unsealed
// writes and of every sealed run not yet committed).
//
// The commit must stay atomic: all of an epoch or none of it, after a
// crash as while running. Ingest and a batch cannot commit together, so
// the commit of an epoch with files is:
//
//  1. an intent (epoch and file names) under keyIngestIntent, synced;
//  2. Ingest of the files (hard links: Ingest consumes its inputs, and the
//     files stay for step 5), with readers held off (visMu) so that no
//     snapshot sees the rows without the epoch marker;
//  3. the epoch's batch (overlay writes, which are newer than fresh rows,
//     the marker and the intent's deletion), synced;
//  4. readers let in;
//  5. the files removed.
//
// A crash between 1 and 3 leaves an intent naming an epoch above the
// committed one. Open then deletes every key of the intent's files
// (recoverIngest): fresh rows are keys never stored before, so deleting
// them restores exactly the committed state, whether or not the ingest
// had happened. A crash after 3 leaves only files, which Open removes.

// keyIngestIntent holds the intent of the commit under way (see above).
var keyIngestIntent = []byte{prefixSystem, 'i'}

// ingestDirName is the directory, inside the store's, of sealed files
// waiting for their epoch's commit.
const ingestDirName = "sluice-ingest"

// defaultIngestFrom is the estimated encoded size of a seal's fresh rows
// from which they go to an sstable rather than the epoch's batch.
const defaultIngestFrom = 8 << 20

// ingestEnabled reports whether a seal of fresh rows estimated at size
// bytes writes them to a file.
func (s *Store) ingestEnabled(size int) bool {
	return s.ingestFrom > 0 && size >= s.ingestFrom
}

// sealFreshFile writes the unsealed fresh rows to a new sstable, in key
// order, and marks them sealed in epoch. It returns "" (and seals nothing)
// when the rows' keys cannot be put in strictly increasing order: a
// descending key, or a row id twice in one epoch; sealFresh then takes them.
func (t *StateTable) sealFreshFile(epoch uint64) (*ingestFile, error) {
	todo := t.unsealedFresh()
	if len(todo) == 0 || t.idsDescend() {
		return nil, nil
	}
	f, err := t.writeFreshFile(t.store.newIngestFile(epoch, t.lay.desc.ID, t.owner), todo)
	if err != nil {
		return nil, err
	}
	// Spilled rows are read from the sealed file until their commit.
	sealedFile := &spillFile{path: f.path}
	for _, fc := range todo {
		fc.sealed = epoch
		if fc.spill != nil {
			fc.spill = sealedFile
		}
	}
	return f, nil
}

// writeFreshFile writes the rows of todo to a new sstable name, synced,
// in key order, and removes their spills. On error the chunks are as they
// were (some may have been spilled).
func (t *StateTable) writeFreshFile(name string, todo []*freshChunk) (*ingestFile, error) {
	spills := spillsOf(todo)
	var inMemory []*freshChunk
	for _, fc := range todo {
		if fc.spill == nil {
			inMemory = append(inMemory, fc)
		}
	}
	if n := freshBytes(inMemory); spills != nil && n >= sealSpillFrom && storedInKeyOrder(inMemory) {
		// Merged with spills, the rows would be taken from memory in key
		// order, a cache miss each; a spill reads them in stored order.
		// If it fails, the chunks are as they were: merge from memory.
		if sf, err := t.spill(inMemory, n, true); err == nil {
			spills, inMemory = append(spills, sf), nil
		}
	}
	order, stored := freshSortedOrderStored(inMemory)
	fill := t.freshRowsInOrder(inMemory, order)
	switch {
	case spills != nil:
		fill = t.mergeFill(spills, inMemory, order)
	case stored && !stageOff && !t.freshByKey():
		fill = t.freshRowsStaged(inMemory) // fresh_stage.go
	}
	f, err := t.store.writeSST(name, t.writerOptions(), fill)
	if err != nil {
		return nil, fmt.Errorf("storage: table %d: write sealed rows: %w", t.lay.desc.ID, err)
	}
	for _, sf := range spills {
		sf.close(t.store)
	}
	return f, nil
}

// writerOptions are the options of the table's sealed files: filters
// for a table read by key, the scan layout for one read by scans.
func (t *StateTable) writerOptions() *sstable.WriterOptions {
	if t.keyedReads {
		return &t.store.writerOpts
	}
	return &t.store.scanOpts
}

// freshBytes is the bytes the chunks hold in memory.
func freshBytes(todo []*freshChunk) int {
	n := 0
	for _, fc := range todo {
		n += fc.bytes()
	}
	return n
}

// unsealedFresh returns the fresh chunks not sealed yet, nor written to a
// file of their epoch (preseal.go).
func (t *StateTable) unsealedFresh() []*freshChunk {
	var todo []*freshChunk
	for i := range t.fresh {
		if fc := &t.fresh[i]; fc.sealed == 0 && !fc.presealed {
			todo = append(todo, fc)
		}
	}
	return todo
}

// freshSortedOrder is freshKeyOrder with the keys of each vnode rising
// strictly: chunks of concurrent statements can interleave their keys,
// and such a vnode's rows are sorted. A key in several chunks (an
// UPDATE's overwrites, OverwriteFresh) is taken from the newest.
func freshSortedOrder(todo []*freshChunk) []freshRef {
	order, _ := freshSortedOrderStored(todo)
	return order
}

// freshSortedOrderStored is freshSortedOrder also reporting whether the
// order within every vnode is the order the rows are stored in (no vnode
// needed sorting).
func freshSortedOrderStored(todo []*freshChunk) ([]freshRef, bool) {
	order := freshKeyOrder(todo)
	if storedInKeyOrder(todo) { // a pass in memory order, no sort
		return order, true
	}
	compare := func(a, b freshRef) int { return compareFresh(todo[a.chunk], a.k, todo[b.chunk], b.k) }
	vnode := func(r freshRef) uint16 { return todo[r.chunk].vnodes[r.k] }
	out := order[:0]
	for lo := 0; lo < len(order); {
		hi := lo + 1
		sorted := true
		for ; hi < len(order) && vnode(order[hi]) == vnode(order[lo]); hi++ {
			sorted = sorted && compare(order[hi], order[hi-1]) > 0
		}
		run := order[lo:hi]
		if !sorted {
			// Stable: a key's rows stay in chunk order, the newest last.
			slices.SortStableFunc(run, compare)
		}
		for i, r := range run {
			if i+1 == len(run) || compare(r, run[i+1]) != 0 {
				out = append(out, r)
			}
		}
		lo = hi
	}
	return out, false
}

// newIngestFile returns a new path in the ingest directory.
func (s *Store) newIngestFile(epoch uint64, table uint32, owner ActorID) string {
	n := s.ingestSeq.Add(1)
	return s.fs.PathJoin(s.ingestDir, fmt.Sprintf("%d-%d-%d-%d.sst", epoch, table, owner, n))
}

// ingestFile is a sealed sstable waiting for its epoch's commit, with its
// smallest and largest key.
type ingestFile struct {
	path   string
	lo, hi []byte
}

// writeSST creates name with opts, lets fill add keys in strictly
// increasing order, and syncs the file. On error the file is removed.
func (s *Store) writeSST(name string, opts *sstable.WriterOptions, fill func(add func(k, v []byte) error) error) (*ingestFile, error) {
	return s.writeSSTFile(name, opts, true, fill)
}

// writeSSTFile is writeSST, syncing the file only when sync is set.
func (s *Store) writeSSTFile(name string, opts *sstable.WriterOptions, sync bool, fill func(add func(k, v []byte) error) error) (*ingestFile, error) {
	if err := s.makeDir(s.ingestDir, &s.ingestDirMade); err != nil {
		return nil, err
	}
	f, err := s.fs.Create(name, "")
	if err != nil {
		return nil, err
	}
	out := &ingestFile{path: name}
	bw := newBufferedWritable(f)
	bw.noSync = !sync
	w := sstable.NewWriter(bw, *opts)
	err = fill(func(k, v []byte) error {
		if out.lo == nil {
			out.lo = slices.Clone(k)
		}
		out.hi = append(out.hi[:0], k...)
		return w.Set(k, v)
	})
	if err != nil {
		bw.noSync = true // the file goes: no sync for it (a cancelled merge)
	}
	// Close finishes the file and syncs it.
	err = errors.Join(err, w.Close())
	if err != nil {
		_ = s.fs.Remove(name)
		return nil, err
	}
	return out, nil
}

// commitIngest runs steps 1–3 of an epoch's commit with files: b is the
// epoch's batch, committed last with the intent's deletion. If a step
// after the intent fails, the ingested rows are deleted again, so the
// store holds exactly the committed epochs; if even that fails, kept is
// true: the files must stay for Open to finish the undo.
func (s *Store) commitIngest(ctx context.Context, epoch uint64, files []*ingestFile, b *pebble.Batch) (kept bool, err error) {
	if err := s.syncIngestDir(); err != nil {
		return false, err
	}
	intent := s.db.NewBatch()
	err = intent.Set(keyIngestIntent, encodeIntent(epoch, files, s.fs.PathBase), nil)
	if err == nil {
		err = intent.Commit(pebble.Sync)
	}
	_ = intent.Close()
	if err != nil {
		return false, fmt.Errorf("write ingest intent: %w", err)
	}
	s.visMu.Lock()
	defer s.visMu.Unlock()
	if err = s.ingestAndCommit(ctx, files, b); err == nil {
		return false, nil
	}
	if errors.Is(err, errSimulatedCrash) {
		return true, err // a test's crash: the process would be gone
	}
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = f.path
	}
	if uerr := s.undoIngest(epoch, paths); uerr != nil {
		return true, errors.Join(err, uerr)
	}
	return false, err
}

// ingestAndCommit is steps 2 and 3.
func (s *Store) ingestAndCommit(ctx context.Context, files []*ingestFile, b *pebble.Batch) error {
	if err := s.crashPoint("intent"); err != nil {
		return err
	}
	if err := s.ingestFiles(ctx, files); err != nil {
		return err
	}
	if err := s.crashPoint("ingested"); err != nil {
		return err
	}
	if err := b.Delete(keyIngestIntent, nil); err != nil {
		return err
	}
	return b.Commit(pebble.Sync)
}

// ingestFiles ingests files, in as few Ingest calls as their key ranges
// allow: the files of one call must not overlap. Each is passed as a hard
// link, which Ingest consumes; the file itself stays until the commit is
// done (recoverIngest reads it after a crash).
func (s *Store) ingestFiles(ctx context.Context, files []*ingestFile) error {
	for _, g := range ingestGroups(files) {
		links := make([]string, len(g))
		for i, f := range g {
			links[i] = f.path + ".link"
			if err := s.fs.Link(f.path, links[i]); err != nil {
				return fmt.Errorf("link %s: %w", f.path, err)
			}
		}
		if err := s.db.Ingest(ctx, links); err != nil {
			return fmt.Errorf("ingest: %w", err)
		}
	}
	return nil
}

// ingestGroups splits files into runs, in key order, whose key ranges do
// not overlap.
func ingestGroups(files []*ingestFile) [][]*ingestFile {
	sorted := slices.Clone(files)
	slices.SortFunc(sorted, func(a, b *ingestFile) int { return bytes.Compare(a.lo, b.lo) })
	var groups [][]*ingestFile
	var last []byte
	for i, f := range sorted {
		if i == 0 || bytes.Compare(f.lo, last) <= 0 {
			groups = append(groups, nil)
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], f)
		last = f.hi
	}
	return groups
}

// maybeSealFreshFile seals the unsealed fresh rows into a file when they
// are many (Options.IngestFrom), or returns nil for sealFresh to put them
// into the epoch's batch.
//
// Rows that overwrite rows the table holds (OverwriteFresh) never go to a
// file: a commit that fails after its files were ingested undoes them by
// deleting their keys (undoIngest), which would delete the rows they
// overwrote, and files of epochs committed together are not ingested in
// epoch order. An epoch with overwrites seals all its fresh rows into the
// batch, after the files of earlier epochs and in epoch order.
func (t *StateTable) maybeSealFreshFile(epoch uint64) (*ingestFile, error) {
	if !t.hasUnsealedFresh() || t.hasUnsealedOverwrites() ||
		!t.hasUnsealedSpills() && !t.store.ingestEnabled(t.freshSealedSize()) {
		return nil, nil
	}
	return t.sealFreshFile(epoch)
}

// hasUnsealedOverwrites reports whether unsealed fresh rows overwrite.
func (t *StateTable) hasUnsealedOverwrites() bool {
	for _, fc := range t.fresh {
		if fc.sealed == 0 && fc.overwrite {
			return true
		}
	}
	return false
}
