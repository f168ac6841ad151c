package stream

import (
	"context"

	"github.com/sluice-db/sluice/internal/types"
)

// Merge is the executor at the bottom of a fragment that receives from the
// actors of an upstream fragment. It aligns their barriers, so the rest of
// the chain sees one barrier per epoch after all data of that epoch from
// every upstream actor.
type Merge struct {
	schema []types.Type
	al     *aligner
}

// NewMerge returns a merge over inputs, whose messages have schema.
func NewMerge(schema []types.Type, inputs []*Input) *Merge {
	chans := make([]<-chan Message, len(inputs))
	for i, in := range inputs {
		chans[i] = in.ch
	}
	return &Merge{schema: schema, al: newAligner(chans)}
}

// Next returns the next chunk or aligned barrier.
func (m *Merge) Next(ctx context.Context) (Message, error) {
	if len(m.al.chans) == 0 {
		<-ctx.Done()
		return Message{}, ctx.Err()
	}
	_, msg, err := m.al.nextMsg(ctx)
	return msg, err
}

// Schema returns the column types.
func (m *Merge) Schema() []types.Type { return m.schema }
