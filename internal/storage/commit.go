package storage

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// ActorID names the owner of a state table's staged writes: the actor that
// opened it. DiscardActor drops everything an owner staged but did not
// commit.
type ActorID uint32

// stagedBatch is one state table's writes for one sealed epoch: a batch
// and, for a bulk epoch, files of its fresh rows and fresh keys
// (ingest.go, ingest_items.go), which are older than the batch's writes.
type stagedBatch struct {
	owner ActorID
	table uint32
	batch *pebble.Batch
	files []*ingestFile
	fs    vfs.FS // to remove files
}

// addFile adds f, if not nil, to the files the commit ingests.
func (b *stagedBatch) addFile(f *ingestFile) {
	if f != nil {
		b.files = append(b.files, f)
	}
}

func (b *stagedBatch) release() {
	if b.batch != nil {
		_ = b.batch.Close()
		b.batch = nil
	}
	for _, f := range b.files {
		_ = b.fs.Remove(f.path)
	}
	b.files = nil
}

// stage hands a sealed epoch's batch to the store. It fails if the table was
// dropped or the store aborted its uncommitted state since the table was
// opened, because then the writes belong to nobody.
func (s *Store) stage(epoch uint64, sb *stagedBatch, gen, dropGen uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkSealLocked(epoch, sb.table, gen, dropGen); err != nil {
		return err
	}
	if _, f := s.mu.fenced[sb.owner]; f {
		return fmt.Errorf("storage: actor %d: %w", sb.owner, ErrActorFenced)
	}
	s.mu.staged[epoch] = append(s.mu.staged[epoch], sb)
	return nil
}

// checkSeal reports whether a table opened at (gen, dropGen) may still seal
// epoch; an empty Seal calls it so that staleness shows up at once.
func (s *Store) checkSeal(epoch uint64, table uint32, gen, dropGen uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.checkSealLocked(epoch, table, gen, dropGen)
}

func (s *Store) checkSealLocked(epoch uint64, table uint32, gen, dropGen uint64) error {
	switch {
	case s.mu.closed:
		return ErrClosed
	case gen != s.generation.Load():
		return fmt.Errorf("storage: table %d: %w", table, ErrStaleTable)
	case dropGen != s.mu.dropGen[table]:
		return fmt.Errorf("storage: table %d: %w", table, ErrTableDropped)
	case epoch <= s.committed.Load():
		return fmt.Errorf("storage: seal of epoch %d at or below committed epoch %d", epoch, s.committed.Load())
	}
	return nil
}

// StageMeta records a meta write (value nil = delete) to commit atomically
// with epoch, for example a source's offset as of that epoch.
func (s *Store) StageMeta(epoch uint64, name string, value []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.closed {
		return ErrClosed
	}
	if epoch <= s.committed.Load() {
		return fmt.Errorf("storage: meta staged for epoch %d at or below committed epoch %d", epoch, s.committed.Load())
	}
	m := s.mu.stagedMeta[epoch]
	if m == nil {
		m = make(map[string][]byte)
		s.mu.stagedMeta[epoch] = m
	}
	m[name] = slices.Clone(value)
	return nil
}

// Commit makes epoch durable: every staged batch with an epoch ≤ epoch, the
// staged meta writes, the extra meta entries (source offsets; nil value =
// delete) and the committed-epoch marker go into one synced Pebble batch.
// Only after the sync does CommittedEpoch advance, so overlays drop their
// copies of these writes only once Pebble has them. Epochs must commit in
// increasing order. If Commit fails the staged batches are gone and the
// caller must recover (AbortUncommitted and rebuild from CommittedEpoch).
func (s *Store) Commit(ctx context.Context, epoch uint64, meta map[string][]byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	batches, metas, err := s.takeStaged(epoch)
	if err != nil {
		return err
	}
	// Whatever reached Pebble is visible by now, even when the commit
	// fails half way; a successful one counts itself below.
	counted := false
	defer func() {
		if !counted {
			s.points.changed()
		}
	}()
	// Sized up front: a bulk epoch's batches are tens of megabytes, and
	// growing one by doubling copied them again and again.
	size := 1 << 10
	for _, sb := range batches {
		size += len(sb.batch.Repr())
	}
	if err := s.disk.checkCommit(size); err != nil {
		for _, sb := range batches {
			sb.release()
		}
		return fmt.Errorf("storage: commit epoch %d: %w", epoch, err)
	}
	b := s.db.NewBatchWithSize(size)
	defer b.Close()
	var files []*ingestFile
	for _, sb := range batches {
		files = append(files, sb.files...)
	}
	defer func() {
		for _, sb := range batches {
			sb.release()
		}
	}()
	for _, sb := range batches {
		if err := b.Apply(sb.batch, nil); err != nil {
			return fmt.Errorf("storage: commit epoch %d: %w", epoch, err)
		}
		_ = sb.batch.Close()
		sb.batch = nil
	}
	metas = append(metas, meta)
	for _, m := range metas {
		if err := writeMeta(b, m); err != nil {
			return fmt.Errorf("storage: commit epoch %d: %w", epoch, err)
		}
	}
	if err := b.Set(keyCommittedEpoch, binary.BigEndian.AppendUint64(nil, epoch), nil); err != nil {
		return fmt.Errorf("storage: commit epoch %d: %w", epoch, err)
	}
	s.markerWrites.Add(1)
	if len(files) > 0 {
		var kept bool
		if kept, err = s.commitIngest(ctx, epoch, files, b); kept {
			for _, sb := range batches {
				sb.files = nil // Open needs them to finish the undo
			}
		}
	} else {
		err = b.Commit(pebble.Sync)
	}
	if err != nil {
		// markerWrites stays odd: snapshots read the marker from now on.
		return fmt.Errorf("storage: commit epoch %d: %w", epoch, err)
	}
	// Counted before the epoch is: a table that sees the epoch committed
	// drops its overlay's copy of the epoch's writes and reads them from
	// Pebble through a pooled iterator (StateTable.AddCount), which must
	// then be one made after the writes became visible.
	s.points.changed()
	counted = true
	s.becomeCommitted(epoch)
	s.markerWrites.Add(1)
	return nil
}

// takeStaged removes and returns, in epoch order, every staged batch and
// staged meta map with an epoch ≤ epoch.
func (s *Store) takeStaged(epoch uint64) ([]*stagedBatch, []map[string][]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.closed {
		return nil, nil, ErrClosed
	}
	if c := s.committed.Load(); epoch <= c {
		return nil, nil, fmt.Errorf("storage: commit of epoch %d at or below committed epoch %d", epoch, c)
	}
	var epochs []uint64
	for e := range s.mu.staged {
		if e <= epoch {
			epochs = append(epochs, e)
		}
	}
	for e := range s.mu.stagedMeta {
		if e <= epoch && s.mu.staged[e] == nil {
			epochs = append(epochs, e)
		}
	}
	slices.Sort(epochs)
	var batches []*stagedBatch
	var metas []map[string][]byte
	for _, e := range epochs {
		batches = append(batches, s.mu.staged[e]...)
		if m := s.mu.stagedMeta[e]; m != nil {
			metas = append(metas, m)
		}
		delete(s.mu.staged, e)
		delete(s.mu.stagedMeta, e)
	}
	return batches, metas, nil
}

// becomeCommitted publishes epoch as committed and wakes waiters.
func (s *Store) becomeCommitted(epoch uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.committed.Store(epoch)
	if !s.mu.closed {
		close(s.mu.committedCh)
		s.mu.committedCh = make(chan struct{})
	}
}

// WaitCommitted returns once CommittedEpoch ≥ epoch, or with ctx's error, or
// ErrClosed when the store closes first.
func (s *Store) WaitCommitted(ctx context.Context, epoch uint64) error {
	for {
		s.mu.Lock()
		if s.committed.Load() >= epoch {
			s.mu.Unlock()
			return nil
		}
		if s.mu.closed {
			s.mu.Unlock()
			return ErrClosed
		}
		ch := s.mu.committedCh
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// DiscardActor drops every batch the actor staged but did not commit. A
// dropped job's actors are discarded so that pending epochs commit without
// their writes. It also stops the actor's merges of files it wrote ahead
// of a seal (preseal_merge.go). It returns the number of batches dropped.
func (s *Store) DiscardActor(owner ActorID) int {
	s.merges.cancel(func(o ActorID) bool { return o == owner })
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.discardLocked(func(sb *stagedBatch) bool { return sb.owner == owner })
}

// FenceAndDiscard is DiscardActor for an actor that may still be running:
// whatever it stages from now on is refused (ErrActorFenced), so nothing
// it writes after the discard can reach a commit. An immediate DROP does
// not wait for its actors to exit. Actor ids are never reused; a recovery
// (AbortUncommitted) lifts the fences.
func (s *Store) FenceAndDiscard(owner ActorID) int {
	s.merges.cancel(func(o ActorID) bool { return o == owner })
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mu.fenced[owner] = struct{}{}
	return s.discardLocked(func(sb *stagedBatch) bool { return sb.owner == owner })
}

// AbortUncommitted drops every staged batch and staged meta write, and makes
// every open StateTable stale (its Seal fails with ErrStaleTable). Recovery
// calls it before rebuilding actors from CommittedEpoch.
func (s *Store) AbortUncommitted() {
	s.merges.cancel(func(ActorID) bool { return true })
	s.mu.Lock()
	defer s.mu.Unlock()
	s.generation.Add(1)
	s.discardLocked(func(*stagedBatch) bool { return true })
	clear(s.mu.stagedMeta)
	clear(s.mu.fenced)
}

// discardLocked releases the staged batches for which drop is true.
func (s *Store) discardLocked(drop func(*stagedBatch) bool) int {
	n := 0
	for e, bs := range s.mu.staged {
		kept := bs[:0]
		for _, sb := range bs {
			if drop(sb) {
				sb.release()
				n++
				continue
			}
			kept = append(kept, sb)
		}
		if len(kept) == 0 {
			delete(s.mu.staged, e)
		} else {
			s.mu.staged[e] = kept
		}
	}
	return n
}

// StagedEpochs returns the epochs that hold staged batches, ascending; for
// tests and introspection.
func (s *Store) StagedEpochs() []uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var es []uint64
	for e := range s.mu.staged {
		es = append(es, e)
	}
	slices.Sort(es)
	return es
}
