package source

import (
	"context"
	"fmt"

	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/task"
	"github.com/sluice-db/sluice/internal/types"
)

// pump pulls the backfill's input on its own goroutine and hands messages
// over an unbuffered channel, so the backfill can tell whether upstream has
// a message ready without blocking (it must not scan while a barrier
// waits) and never reads ahead more than one message.
type pump struct {
	ch  chan stream.Message
	err error // why ch closed; written before the close
}

// startPump starts the pump under g. It stops after a barrier that stops
// actor, on an input error (recorded in err) or when ctx ends.
func startPump(ctx context.Context, g *task.Group, input stream.Executor, actor stream.ActorID) *pump {
	p := &pump{ch: make(chan stream.Message)}
	g.Go(ctx, "backfill-upstream", func(ctx context.Context) error {
		defer close(p.ch)
		for {
			msg, err := input.Next(ctx)
			if err != nil {
				p.err = err
				return nil
			}
			select {
			case p.ch <- msg:
			case <-ctx.Done():
				p.err = ctx.Err()
				return nil
			}
			if msg.Barrier != nil && msg.Barrier.IsStop(actor) {
				p.err = fmt.Errorf("source: backfill input read after stop barrier %d", msg.Barrier.Epoch)
				return nil
			}
		}
	})
	return p
}

// handleUpstream processes one upstream message; ok reports that msg is to
// be returned.
func (b *Backfill) handleUpstream(m stream.Message, open bool) (stream.Message, bool, error) {
	switch {
	case !open:
		if b.pump.err != nil {
			return stream.Message{}, false, fmt.Errorf("source: backfill input: %w", b.pump.err)
		}
		return stream.Message{}, false, stream.ErrUpstreamClosed
	case m.Barrier != nil:
		msg, err := b.onBarrier(m.Barrier)
		return msg, err == nil, err
	case m.Fresh != nil && b.done:
		return m, true, nil // PassFresh: the columns are the table's
	case m.Fresh != nil:
		// Taken just as the scan finished: cannot happen (done is set
		// before finished), but a chunk is always safe.
		c, err := m.Fresh.Decode(b.input.Schema())
		if err != nil {
			return stream.Message{}, false, fmt.Errorf("source: backfill: %w", err)
		}
		return b.handleUpstream(stream.ChunkMsg(c), true)
	case m.Chunk != nil:
		c, err := b.forward(m.Chunk)
		if err != nil || c == nil {
			return stream.Message{}, false, err
		}
		return stream.ChunkMsg(c), true, nil
	case m.Watermark != nil && b.done:
		// Before the scan is done a watermark could be contradicted by
		// snapshot rows still to come, so it is dropped until then.
		return m, true, nil
	}
	return stream.Message{}, false, nil
}

// onBarrier checkpoints the scan position of every vnode, seals it with the
// barrier's epoch and starts a new epoch: the snapshot of the old one is
// released, the fences forgotten, and the scan restarts over the vnodes
// that were blocked.
func (b *Backfill) onBarrier(br *stream.Barrier) (stream.Message, error) {
	b.closeSnap()
	if err := writeProgress(b.progress, b.vn); err != nil {
		return stream.Message{}, fmt.Errorf("source: write backfill progress: %w", err)
	}
	if err := b.progress.Seal(br.Epoch); err != nil {
		return stream.Message{}, fmt.Errorf("source: seal backfill progress at epoch %d: %w", br.Epoch, err)
	}
	for _, v := range b.owned {
		b.vn[v].newEpoch()
	}
	b.epoch, b.wantSnap, b.cursor, b.permit = br.Epoch, br.Checkpoint, 0, false
	return stream.BarrierMsg(br), nil
}

// PassFresh implements stream.FreshPassing: once the scan is done, a
// backfill that keeps every column of the table in order passes the
// table's fresh rows on unchanged.
func (b *Backfill) PassFresh(take func() bool) {
	in, ok := b.input.(stream.FreshPassing)
	if !ok || len(b.columns) != len(b.input.Schema()) {
		return
	}
	for i, c := range b.columns {
		if c != i {
			return
		}
	}
	in.PassFresh(func() bool { return b.finished.Load() && take() })
}

// forward returns the part of an upstream chunk the backfill passes on,
// projected, or nil when nothing passes. A change to a key the scan has
// already emitted is forwarded; a change to a key beyond the scan position
// is dropped, and the vnode's fence keeps the scan from emitting that key
// from the (older) snapshot of this epoch.
func (b *Backfill) forward(c *types.Chunk) (*types.Chunk, error) {
	if b.done {
		return nonEmpty(c.Project(b.columns)), nil
	}
	n := c.Capacity()
	vnodes := b.keys.vnodes(c)
	var keep types.Bitmap
	kept := 0
	for i := range n {
		if !c.Visible(i) {
			continue
		}
		v := vnodes[i]
		if !b.ownedSet.Get(int(v)) {
			return nil, fmt.Errorf("source: backfill of table %d got a change in vnode %d, which this actor does not own", b.upstream.ID, v)
		}
		key, err := b.keys.keyAt(b.keyBuf[:0], c, i)
		if err != nil {
			return nil, fmt.Errorf("source: backfill key: %w", err)
		}
		b.keyBuf = key
		p := &b.vn[v]
		if p.covers(key) {
			keep.Set(i)
			kept++
			continue
		}
		p.drop(key)
	}
	if kept == 0 {
		return nil, nil
	}
	out := c.Project(b.columns)
	if kept < c.Cardinality() {
		out = withOps(out, splitPairs(c, keep))
		out.SetVisibility(keep)
	}
	return out, nil
}

// splitPairs returns c's ops with the halves of an update pair turned into
// a plain Delete or Insert when only one half is kept (its key moved across
// the scan position); nil when no pair is split.
func splitPairs(c *types.Chunk, keep types.Bitmap) []types.Op {
	var ops []types.Op
	n := c.Capacity()
	for i := 0; i+1 < n; i++ {
		if c.Op(i) != types.UpdateDelete || c.Op(i+1) != types.UpdateInsert || keep.Get(i) == keep.Get(i+1) {
			continue
		}
		if ops == nil {
			ops = append([]types.Op(nil), c.Ops...)
		}
		ops[i], ops[i+1] = types.Delete, types.Insert
	}
	return ops
}

// withOps returns c with ops replaced (nil = unchanged), never touching the
// input chunk, which other outputs of the upstream dispatcher may share.
func withOps(c *types.Chunk, ops []types.Op) *types.Chunk {
	if ops == nil {
		return c
	}
	return types.NewChunk(c.Cols, ops)
}

func nonEmpty(c *types.Chunk) *types.Chunk {
	if c.Cardinality() == 0 {
		return nil
	}
	return c
}
