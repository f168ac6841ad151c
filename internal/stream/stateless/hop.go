package stateless

import (
	"context"
	"fmt"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/types"
)

// HopWindow repeats each row once per hopping window that holds its time
// column, with the window's start and end appended (plan.HopWindow). An
// update pair becomes a delete and an insert per window: the pairs of
// different windows would otherwise interleave.
type HopWindow struct {
	input  stream.Executor
	schema []types.Type
	spec   plan.HopWindow
	// wms: the window_start and window_end watermarks implied by the time
	// column's last watermark, returned after it.
	wms []*stream.Watermark
	// read marks the input columns read above (nil: all); the others
	// are not copied per window but NULLs from nulls (ReadOnly).
	read  []bool
	nulls *types.NullHeads
}

func newHopWindow(n *plan.Node, input stream.Executor) (*HopWindow, error) {
	h := n.HopWindow
	if h == nil {
		return nil, fmt.Errorf("stateless: hop_window node without HopWindow")
	}
	in := input.Schema()
	if h.TimeCol < 0 || h.TimeCol >= len(in) {
		return nil, fmt.Errorf("stateless: hop window time column %d of %d", h.TimeCol, len(in))
	}
	t := in[h.TimeCol]
	if t.ID != types.Timestamp && t.ID != types.Timestamptz {
		return nil, fmt.Errorf("stateless: hop window over a %s column", t)
	}
	if err := h.Check(); err != nil {
		return nil, fmt.Errorf("stateless: %w", err)
	}
	schema := append(append([]types.Type(nil), in...), t, t)
	if err := checkSchema(n, schema); err != nil {
		return nil, err
	}
	return &HopWindow{input: input, schema: schema, spec: *h}, nil
}

// ReadOnly tells the hop window that the executors above read only the
// output columns marked in read (nil: all): unread input columns are left
// NULL instead of being copied once per window.
func (h *HopWindow) ReadOnly(read []bool) error {
	if read != nil && len(read) != len(h.schema) {
		return fmt.Errorf("stateless: hop window of %d columns given a read mask of %d", len(h.schema), len(read))
	}
	if read != nil {
		h.read = read[:len(h.schema)-2]
		h.nulls = types.NewNullHeads(h.schema, types.DefaultChunkSize)
	}
	return nil
}

// Schema is the input's columns, then window_start and window_end.
func (h *HopWindow) Schema() []types.Type { return h.schema }

// Next expands the next chunk; barriers and watermarks of the input's
// columns pass unchanged, a watermark on the time column followed by
// those it implies on window_start and window_end.
func (h *HopWindow) Next(ctx context.Context) (stream.Message, error) {
	for {
		if len(h.wms) > 0 {
			w := h.wms[0]
			h.wms = h.wms[1:]
			return stream.Message{Watermark: w}, nil
		}
		msg, err := h.input.Next(ctx)
		if err != nil {
			return stream.Message{}, err
		}
		if msg.Fresh != nil {
			return stream.Message{}, fmt.Errorf("stateless: fresh rows reached a hop window")
		}
		if w := msg.Watermark; w != nil && w.Col == h.spec.TimeCol && w.Value != nil {
			if start, end, ok := h.spec.Watermarks(w.Value); ok {
				n := len(h.schema) - 2
				h.wms = append(h.wms, &stream.Watermark{Col: n, Value: start}, &stream.Watermark{Col: n + 1, Value: end})
			}
		}
		if msg.Chunk == nil {
			return msg, nil
		}
		if c := h.spec.Expand(msg.Chunk, h.schema, h.read, h.nulls); c != nil {
			return stream.ChunkMsg(c), nil
		}
	}
}
