package overtake

import (
	"fmt"

	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// span gathers stored rows of consecutive sequence numbers into a chunk:
// row i is the span's seq+i, an invisible placeholder where no row was
// stored.
type span struct {
	seq     int64
	n, rows int
	keep    bool
	// pairOpen: the last row is an update's delete half, whose insert
	// half must be in the same chunk.
	pairOpen   bool
	b          *types.Builder
	vis        types.Bitmap
	placeholer types.Row
}

func newSpan(ts []types.Type, seq int64) *span {
	return &span{seq: seq, keep: true, b: types.NewUnboundedBuilder(ts), placeholer: make(types.Row, len(ts))}
}

// add places stored row r at its offset.
func (s *span) add(r types.Row, ts []types.Type) error { return s.addKeep(r, ts, true) }

// addKeep is add; keep false counts the row without keeping it (the span
// is then spilled).
func (s *span) addKeep(r types.Row, ts []types.Type, keep bool) error {
	off := int(r[colSeq].(int64) - s.seq)
	s.n, s.rows = off+1, s.rows+1
	s.pairOpen = types.Op(r[colOp].(int64)) == types.UpdateDelete
	s.keep = s.keep && keep
	if !s.keep {
		return nil
	}
	data, err := codec.DecodeValue(r[colRow].([]byte), ts)
	if err != nil {
		return fmt.Errorf("overtake: queued row %d: %w", r[colSeq], err)
	}
	for s.b.Len() < off {
		s.b.Append(types.Insert, s.placeholer)
	}
	s.b.Append(types.Op(r[colOp].(int64)), data)
	s.vis.Set(off)
	return nil
}

// chunk returns the span's rows, padded to n.
func (s *span) chunk() *types.Chunk {
	for s.b.Len() < s.n {
		s.b.Append(types.Insert, s.placeholer)
	}
	c := s.b.Take()
	c.SetVisibility(s.vis)
	return c
}
