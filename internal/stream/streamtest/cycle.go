package streamtest

import (
	"context"

	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/types"
)

// CycleSource is an endless input for benchmarks: it replays Chunks in
// turn, with a barrier after every PerEpoch chunks, and only barriers when
// Chunks is empty. While Epoch is 0 its next message is a barrier; a
// benchmark that starts past a committed epoch sets Epoch to it.
type CycleSource struct {
	Types    []types.Type
	Chunks   []*types.Chunk
	PerEpoch int
	// Epoch is the last barrier's epoch.
	Epoch uint64
	// Sent counts the chunks sent, and InEpoch those since the last barrier.
	Sent, InEpoch int
}

// Schema returns Types.
func (s *CycleSource) Schema() []types.Type { return s.Types }

// Next returns the next chunk or barrier, or ctx's error once it is done.
func (s *CycleSource) Next(ctx context.Context) (stream.Message, error) {
	if err := ctx.Err(); err != nil {
		return stream.Message{}, err
	}
	if s.Epoch == 0 || len(s.Chunks) == 0 || s.InEpoch == s.PerEpoch {
		s.Epoch++
		s.InEpoch = 0
		return stream.NewBarrier(s.Epoch), nil
	}
	c := s.Chunks[s.Sent%len(s.Chunks)]
	s.Sent++
	s.InEpoch++
	return stream.ChunkMsg(c), nil
}
