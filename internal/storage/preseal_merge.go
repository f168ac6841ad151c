package storage

import (
	"context"
	"slices"
	"sync"

	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/sluice-db/sluice/internal/task"
)

// A long stall writes many files of its epoch (preseal.go), and the
// commit ingests each in an Ingest call of its own (they overlap): 140
// files of a 1.7 M-row stall took its commit 0.9–1.2 s, eight milliseconds a
// call. So the files are merged as they accumulate, off the actor's
// goroutine (the store's background group): tiered, mergeFanout files of
// one level into one of the next, so a stall of N bytes keeps about
// (mergeFanout-1)·log(N/presealFrom) files, each row rewritten once per
// level, on the other cores while the stall runs.
//
// The actor owns the list; a merge reads its inputs and writes a new file
// in the background, and the actor swaps it in (its chunks read the new
// file; the inputs are removed) the next time it looks. A seal that finds
// a merge running cancels it and stages the inputs.

// mergeFanout is how many files of one level a merge takes.
const mergeFanout = 4

// presealFiles are the files a table wrote for its unsealed epoch, and
// the merge running over some of them. They are removed if the table is
// let go before its seal stages them (an actor torn down, a recovery):
// a runtime cleanup of the table does it (removeAll).
type presealFiles struct {
	fs    vfs.FS
	files []presealed // owned by the table's goroutine
	merge *presealMerge
	// mu orders a merge's end against removeAll: a merge ending after it
	// removes its own output.
	mu   sync.Mutex
	gone bool
}

// presealed is one file of the epoch, the spillFile its chunks read, and
// its level (0: written by the table; k: merged from files of k-1).
type presealed struct {
	f     *ingestFile
	sf    *spillFile
	level int
}

// presealMerge is a merge under way: done is closed when out (or err) is
// set.
type presealMerge struct {
	inputs []presealed
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	out    *ingestFile
	err    error
}

// mergesRunning are the store's merges under way by owner, so that
// discarding an actor's writes (a dropped job, a recovery) stops its
// merges at once, not when its table is collected.
type mergesRunning struct {
	mu sync.Mutex
	by map[*presealMerge]ActorID
}

func (r *mergesRunning) add(m *presealMerge, owner ActorID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.by == nil {
		r.by = map[*presealMerge]ActorID{}
	}
	r.by[m] = owner
}

func (r *mergesRunning) remove(m *presealMerge) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.by, m)
}

// cancel cancels the merges of the owners stop names.
func (r *mergesRunning) cancel(stop func(ActorID) bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for m, owner := range r.by {
		if stop(owner) {
			m.cancel()
		}
	}
}

// removeAll removes every file and stops the merge (the table is gone).
func (p *presealFiles) removeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.gone = true
	if m := p.merge; m != nil {
		m.cancel()
		if m.out != nil { // done, never swapped in
			_ = p.fs.Remove(m.out.path)
		}
	}
	for _, e := range p.files {
		_ = p.fs.Remove(e.f.path)
	}
	p.files = nil
}

// addPresealed records a new file of the table's and starts a merge if
// one is due.
func (t *StateTable) addPresealed(f *ingestFile, sf *spillFile) {
	t.pre.files = append(t.pre.files, presealed{f: f, sf: sf})
	t.pollMerge(false)
	t.maybeStartMerge()
}

// maybeStartMerge starts a merge of the lowest level holding mergeFanout
// files, unless one is running.
func (t *StateTable) maybeStartMerge() {
	p := t.pre
	if p.merge != nil {
		return
	}
	top := 0
	for _, e := range p.files {
		top = max(top, e.level)
	}
	for level := 0; level <= top; level++ {
		var at []presealed
		for _, e := range p.files {
			if e.level == level {
				at = append(at, e)
			}
		}
		if len(at) >= mergeFanout {
			t.startMerge(at[:mergeFanout])
			return
		}
	}
}

// startMerge merges inputs into a new file in the store's background
// group.
func (t *StateTable) startMerge(inputs []presealed) {
	s, p := t.store, t.pre
	ctx, cancel := context.WithCancel(s.bgCtx)
	m := &presealMerge{inputs: inputs, ctx: ctx, cancel: cancel, done: make(chan struct{})}
	p.merge = m
	name := s.newIngestFile(t.lastSealed+1, t.lay.desc.ID, t.owner)
	opts := t.writerOptions()
	s.merges.add(m, t.owner)
	s.bg.Go(ctx, "storage: merge presealed files", func(ctx context.Context) error {
		defer close(m.done)
		defer s.merges.remove(m)
		var out *ingestFile
		// A panic is this merge's error, not the group's: the group's
		// first error would cancel every later merge.
		err := task.Run(ctx, "storage: merge presealed files", func(ctx context.Context) (err error) {
			out, err = s.mergeSSTs(ctx, name, opts, inputs)
			return err
		})
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.gone && err == nil {
			_ = s.fs.Remove(out.path)
		}
		m.out, m.err = out, err
		return nil // a failed merge leaves its inputs as they were
	})
}

// pollMerge takes the running merge's result if it is done; with wait,
// it cancels the merge and waits for it first (a seal).
func (t *StateTable) pollMerge(wait bool) {
	p := t.pre
	m := p.merge
	if m == nil {
		return
	}
	if wait {
		m.cancel()
	}
	select {
	case <-m.done:
	default:
		if !wait {
			return
		}
		<-m.done
	}
	p.merge = nil
	m.cancel() // its context's resources
	if m.err != nil {
		return // cancelled, or failed: the inputs stay
	}
	t.swapMerged(m)
}

// swapMerged puts m's output in place of its inputs: their chunks read
// it, and the inputs are removed.
func (t *StateTable) swapMerged(m *presealMerge) {
	p := t.pre
	merged := presealed{f: m.out, sf: &spillFile{path: m.out.path}, level: m.inputs[0].level + 1}
	isInput := func(sf *spillFile) bool {
		return slices.ContainsFunc(m.inputs, func(e presealed) bool { return e.sf == sf })
	}
	var parts []*freshChunk
	for i := range t.fresh {
		if fc := &t.fresh[i]; fc.presealed && isInput(fc.spill) {
			parts = append(parts, fc)
		}
	}
	if len(parts) > 0 {
		t.replaceFresh(parts, presealedChunk(merged.sf, parts))
	}
	p.files = slices.DeleteFunc(p.files, func(e presealed) bool { return isInput(e.sf) })
	p.files = append(p.files, merged)
	for _, e := range m.inputs {
		e.sf.close(t.store) // its reader, if a Get opened one
		_ = t.store.fs.Remove(e.f.path)
	}
}

// mergeSSTs writes the rows of inputs' files, in key order, to a new
// sstable name (a key in several taken from the newest, as a seal does).
func (s *Store) mergeSSTs(ctx context.Context, name string, opts *sstable.WriterOptions, inputs []presealed) (*ingestFile, error) {
	return s.writeSST(name, opts, func(add func(k, v []byte) error) error {
		h := &mergeHeap{}
		defer h.close()
		for i, e := range inputs {
			src, err := s.sstSource(e.f.path)
			if err != nil {
				return err
			}
			h.push(src, i)
		}
		return h.drain(ctx, add)
	})
}

// sstSource yields an sstable's rows in order (a mergeSource).
type sstSource struct {
	r    *sstable.Reader
	it   sstable.Iterator
	k, v []byte
	end  bool
}

// sstSource opens the sstable path for a merge.
func (s *Store) sstSource(path string) (*sstSource, error) {
	r, err := s.openSST(path)
	if err != nil {
		return nil, err
	}
	it, err := r.NewIter(sstable.NoTransforms, nil, nil, sstable.AssertNoBlobHandles)
	if err != nil {
		_ = r.Close()
		return nil, err
	}
	src := &sstSource{r: r, it: it}
	if err := src.step(true); err != nil {
		src.close()
		return nil, err
	}
	return src, nil
}

// step moves the iterator to its first row or the next, and copies it.
func (src *sstSource) step(first bool) error {
	move := src.it.Next
	if first {
		move = src.it.First
	}
	kv := move()
	if kv == nil {
		src.end = true
		return src.it.Error()
	}
	v, _, err := kv.Value(src.v[:0])
	src.k, src.v = append(src.k[:0], kv.K.UserKey...), append(src.v[:0], v...)
	return err
}

func (src *sstSource) key() []byte   { return src.k }
func (src *sstSource) value() []byte { return src.v }
func (src *sstSource) done() bool    { return src.end }
func (src *sstSource) next() error   { return src.step(false) }
func (src *sstSource) close() {
	_ = src.it.Close()
	_ = src.r.Close()
}
