package stream

import (
	"context"
	"fmt"

	"github.com/sluice-db/sluice/internal/types"
)

// Merge is the executor at the bottom of a fragment that receives from the
// actors of an upstream fragment. It aligns their barriers, so the rest of
// the chain sees one barrier per epoch after all data of that epoch from
// every upstream actor.
type Merge struct {
	schema []types.Type
	al     *aligner
	// fresh says whether the chain above takes FreshRows as they are
	// (PassFresh); otherwise they are decoded here, so no other executor
	// ever sees them.
	fresh func() bool
	// read marks the columns the chain above reads (nil: all); the others
	// of decoded fresh rows are left NULL. See ReadOnly.
	read []bool
	// wm takes the least of the upstream actors' watermarks.
	wm *WatermarkMin
	// stats are the receiving actor's (CountFor), or nil.
	stats *ActorStats
}

// NewMerge returns a merge over inputs, whose messages have schema.
func NewMerge(schema []types.Type, inputs []*Input) *Merge {
	chans := make([]<-chan Message, len(inputs))
	var stats *ActorStats
	for i, in := range inputs {
		chans[i] = in.ch
		stats = in.stats
	}
	m := &Merge{schema: schema, al: newAligner(chans), wm: NewWatermarkMin(len(chans)), stats: stats}
	if stats != nil {
		m.al.waited, m.al.skipWaits = &stats.InputBlocked, &stats.alignedWaits
	}
	return m
}

// Next returns the next chunk or aligned barrier.
func (m *Merge) Next(ctx context.Context) (Message, error) {
	if len(m.al.chans) == 0 {
		<-ctx.Done()
		return Message{}, ctx.Err()
	}
	var i int
	var msg Message
	var err error
	for {
		i, msg, err = m.al.nextMsg(ctx)
		if err != nil || msg.Watermark == nil {
			break
		}
		if w, ok := m.wm.Observe(i, msg.Watermark); ok {
			return Message{Watermark: w}, nil
		}
	}
	if err != nil || msg.Fresh == nil || (m.fresh != nil && m.fresh()) {
		if m.stats != nil && err == nil {
			m.stats.RowsIn.Add(chunkRows(msg))
		}
		return msg, err
	}
	if m.stats != nil {
		m.stats.RowsIn.Add(chunkRows(msg))
	}
	c, err := msg.Fresh.DecodeOnly(m.schema, m.read)
	if err != nil {
		return Message{}, fmt.Errorf("stream: merge: %w", err)
	}
	return ChunkMsg(c), nil
}

// ReadOnly tells the merge that the executors above it read only the
// columns marked in read (nil: all), so decoding fresh rows may skip the
// others and leave them NULL. Chunks that arrive as chunks are passed on
// as they are. A mask of the wrong length is an error.
func (m *Merge) ReadOnly(read []bool) error {
	if read != nil && len(read) != len(m.schema) {
		return fmt.Errorf("stream: merge of %d columns given a read mask of %d", len(m.schema), len(read))
	}
	m.read = read
	return nil
}

// PassFresh implements FreshPassing.
func (m *Merge) PassFresh(take func() bool) { m.fresh = take }

// Schema returns the column types.
func (m *Merge) Schema() []types.Type { return m.schema }
