package stream

import (
	"context"
	"fmt"
	"slices"

	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// Dispatcher sends an actor's output to the actors of one downstream
// fragment. Barriers and watermarks go to every output; chunks go where the
// dispatcher's rule sends each row.
type Dispatcher interface {
	Dispatch(ctx context.Context, msg Message) error
	Outputs() []*Output
}

// sendAll sends msg to every output.
func sendAll(ctx context.Context, outs []*Output, msg Message) error {
	for _, o := range outs {
		if err := o.Send(ctx, msg); err != nil {
			return err
		}
	}
	return nil
}

// SimpleDispatcher sends everything to one output (a singleton downstream,
// or no-shuffle from actor i to actor i).
type SimpleDispatcher struct{ Out *Output }

// Dispatch sends msg on.
func (d *SimpleDispatcher) Dispatch(ctx context.Context, msg Message) error {
	return d.Out.Send(ctx, msg)
}

// Outputs returns the one output.
func (d *SimpleDispatcher) Outputs() []*Output { return []*Output{d.Out} }

// BroadcastDispatcher sends every message to every output.
type BroadcastDispatcher struct{ Outs []*Output }

// Dispatch sends msg to all outputs.
func (d *BroadcastDispatcher) Dispatch(ctx context.Context, msg Message) error {
	return sendAll(ctx, d.Outs, msg)
}

// Outputs returns the outputs.
func (d *BroadcastDispatcher) Outputs() []*Output { return d.Outs }

// HashDispatcher routes each row by the hash of its distribution key to
// the output that owns the row's vnode. Each output gets the same columns
// with its own visibility mask, so routing copies no row data. An update
// pair whose halves land on different outputs becomes a Delete and an
// Insert, because neither downstream actor sees both halves.
type HashDispatcher struct {
	Outs    []*Output
	DistKey []int
	// VNodeOwner maps a vnode to the index in Outs of the actor owning it.
	VNodeOwner []int
	hashes     []uint64
	dest       []int // each row's output (a chunk's or fresh rows'), reused
}

// NewHashDispatcher returns a hash dispatcher; owner[v] is the output
// index for vnode v and must cover every vnode.
func NewHashDispatcher(outs []*Output, distKey []int, owner []int) (*HashDispatcher, error) {
	if len(owner) != codec.VNodeCount {
		return nil, fmt.Errorf("stream: hash dispatcher needs %d vnode owners, got %d", codec.VNodeCount, len(owner))
	}
	for v, o := range owner {
		if o < 0 || o >= len(outs) {
			return nil, fmt.Errorf("stream: vnode %d owned by output %d of %d", v, o, len(outs))
		}
	}
	return &HashDispatcher{Outs: outs, DistKey: distKey, VNodeOwner: owner}, nil
}

// Outputs returns the outputs.
func (d *HashDispatcher) Outputs() []*Output { return d.Outs }

// Dispatch routes a chunk or fresh rows by hash; other messages go to
// every output.
func (d *HashDispatcher) Dispatch(ctx context.Context, msg Message) error {
	if msg.Fresh != nil {
		return d.dispatchFresh(ctx, msg.Fresh)
	}
	if msg.Chunk == nil {
		return sendAll(ctx, d.Outs, msg)
	}
	if len(d.Outs) == 1 {
		return d.Outs[0].Send(ctx, msg)
	}
	c := msg.Chunk
	dest := d.route(c)
	ops := splitCrossingUpdates(c, dest)
	for o, out := range d.Outs {
		var vis types.Bitmap
		any := false
		for i, to := range dest {
			if to == o {
				vis.Set(i)
				any = true
			}
		}
		if !any {
			continue
		}
		part := &types.Chunk{Cols: c.Cols, Ops: ops}
		part.SetVisibility(vis)
		if err := out.Send(ctx, ChunkMsg(part)); err != nil {
			return err
		}
	}
	return nil
}

// dispatchFresh routes fresh rows by the hash of their ids, which must be
// the distribution key.
func (d *HashDispatcher) dispatchFresh(ctx context.Context, f *FreshRows) error {
	if len(d.DistKey) != 1 || d.DistKey[0] != f.IDCol {
		return fmt.Errorf("stream: fresh rows keyed by column %d dispatched by %v", f.IDCol, d.DistKey)
	}
	if f.Loaded != nil {
		// The file spans every vnode: each actor adds its own.
		return sendAll(ctx, d.Outs, Message{Fresh: f})
	}
	if len(d.Outs) == 1 {
		return d.Outs[0].Send(ctx, Message{Fresh: f})
	}
	d.hashes = codec.HashInt64s(f.IDs, d.hashes[:0])
	d.dest = slices.Grow(d.dest[:0], len(d.hashes))[:len(d.hashes)]
	for k, h := range d.hashes {
		d.dest[k] = d.VNodeOwner[codec.VNodeOf(h)]
	}
	for o, part := range f.split(d.dest, len(d.Outs)) {
		if part == nil {
			continue
		}
		if err := d.Outs[o].Send(ctx, Message{Fresh: part}); err != nil {
			return err
		}
	}
	return nil
}

// route returns each row's output index, or -1 for an invisible row.
func (d *HashDispatcher) route(c *types.Chunk) []int {
	d.hashes = codec.HashColumns(c, d.DistKey, d.hashes[:0])
	dest := slices.Grow(d.dest[:0], c.Capacity())[:c.Capacity()]
	d.dest = dest
	for i := range dest {
		if !c.Visible(i) {
			dest[i] = -1
			continue
		}
		dest[i] = d.VNodeOwner[codec.VNodeOf(d.hashes[i])]
	}
	return dest
}

// splitCrossingUpdates returns the chunk's ops with every update pair whose
// halves go to different outputs turned into Delete + Insert. It returns the
// original slice when nothing changes.
func splitCrossingUpdates(c *types.Chunk, dest []int) []types.Op {
	ops := c.Ops
	copied := false
	for i := 0; i+1 < len(c.Ops); i++ {
		if c.Ops[i] != types.UpdateDelete || c.Ops[i+1] != types.UpdateInsert || dest[i] == dest[i+1] {
			continue
		}
		if !copied {
			ops = append([]types.Op(nil), c.Ops...)
			copied = true
		}
		ops[i], ops[i+1] = types.Delete, types.Insert
		i++
	}
	return ops
}

// EvenVNodeOwners spreads the vnodes over n actors in contiguous ranges,
// the way the scheduler assigns them: actor k owns vnodes
// [k*256/n, (k+1)*256/n).
func EvenVNodeOwners(n int) []int {
	owner := make([]int, codec.VNodeCount)
	for v := range owner {
		owner[v] = v * n / codec.VNodeCount
	}
	return owner
}

// VNodesOf returns the vnodes owned by output index k under owner.
func VNodesOf(owner []int, k int) []uint16 {
	var vs []uint16
	for v, o := range owner {
		if o == k {
			vs = append(vs, uint16(v))
		}
	}
	return vs
}
