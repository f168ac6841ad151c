package batch

import (
	"bufio"
	"container/heap"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// An ORDER BY larger than memory sorts on disk: rows are kept until they
// take half the query's memory limit (or the server's query memory runs
// short, mem.go), then sorted (stably) and written to a run file in
// Options.SpillDir; at the end the runs and the rows still in memory are
// merged, ties going to the earlier run, so the order is the one an
// in-memory stable sort gives. Run files are removed when the query ends,
// however it ends. (Operators that keep state by key partition instead,
// partition.go.)

// externalSort collects a query's rows into sorted runs.
type externalSort struct {
	x  *executor
	by []plan.ColumnOrder
	ts []types.Type

	rows  []types.Row
	bytes int64
	runs  []*os.File
	buf   []byte
}

func (s *externalSort) add(r types.Row) error {
	n := rowBytes(r)
	if len(s.rows) > 0 && s.x.pressed(s.bytes, n) {
		if err := s.spill(); err != nil {
			return err
		}
	}
	if err := s.x.keep(n); err != nil {
		return err
	}
	s.rows = append(s.rows, r)
	s.bytes += n
	return nil
}

func (s *externalSort) sortRows() {
	slices.SortStableFunc(s.rows, func(a, b types.Row) int { return compareBy(a, b, s.by) })
}

// spill writes the rows in memory, sorted, to a new run file.
func (s *externalSort) spill() error {
	s.sortRows()
	f, err := os.CreateTemp(s.x.spillDir, "sluice-sort-*")
	if err != nil {
		return fmt.Errorf("batch: spilling a sort: %w", err)
	}
	s.runs = append(s.runs, f)
	w := bufio.NewWriterSize(f, 256<<10)
	var n [binary.MaxVarintLen64]byte
	for _, r := range s.rows {
		v, err := codec.EncodeValue(s.buf[:0], r, s.ts)
		if err != nil {
			return err
		}
		s.buf = v
		if _, err := w.Write(n[:binary.PutUvarint(n[:], uint64(len(v)))]); err != nil {
			return fmt.Errorf("batch: spilling a sort: %w", err)
		}
		if _, err := w.Write(v); err != nil {
			return fmt.Errorf("batch: spilling a sort: %w", err)
		}
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("batch: spilling a sort: %w", err)
	}
	s.x.release(s.bytes)
	s.rows, s.bytes = nil, 0
	return nil
}

// close removes the run files.
func (s *externalSort) close() {
	for _, f := range s.runs {
		_ = f.Close()
		_ = os.Remove(f.Name())
	}
}

// each passes every row in order to fn.
func (s *externalSort) each(ctx context.Context, fn func(types.Row) error) error {
	s.sortRows()
	h := &runHeap{by: s.by}
	for i, f := range s.runs {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("batch: reading a sort run: %w", err)
		}
		src := &fileRun{r: bufio.NewReaderSize(f, 256<<10), ts: s.ts}
		if err := h.push(src, i); err != nil {
			return err
		}
	}
	if err := h.push(&memRun{rows: s.rows}, len(s.runs)); err != nil {
		return err
	}
	for n := 0; h.Len() > 0; n++ {
		if n%1024 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		top := h.items[0]
		if err := fn(top.row); err != nil {
			return err
		}
		if err := h.advance(); err != nil {
			return err
		}
	}
	return nil
}

// run is one sorted source of rows; next returns nil at its end.
type run interface{ next() (types.Row, error) }

type memRun struct{ rows []types.Row }

func (m *memRun) next() (types.Row, error) {
	if len(m.rows) == 0 {
		return nil, nil
	}
	r := m.rows[0]
	m.rows = m.rows[1:]
	return r, nil
}

type fileRun struct {
	r   *bufio.Reader
	ts  []types.Type
	buf []byte
}

func (f *fileRun) next() (types.Row, error) {
	n, err := binary.ReadUvarint(f.r)
	if errors.Is(err, io.EOF) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("batch: reading a sort run: %w", err)
	}
	f.buf = slices.Grow(f.buf[:0], int(n))[:n]
	if _, err := io.ReadFull(f.r, f.buf); err != nil {
		return nil, fmt.Errorf("batch: reading a sort run: %w", err)
	}
	return codec.DecodeValue(f.buf, f.ts)
}

// runHeap merges runs: the smallest head row first, ties to the earlier
// run.
type runHeap struct {
	by    []plan.ColumnOrder
	items []runHead
}

type runHead struct {
	row types.Row
	idx int
	src run
}

func (h *runHeap) Len() int { return len(h.items) }
func (h *runHeap) Less(i, j int) bool {
	if c := compareBy(h.items[i].row, h.items[j].row, h.by); c != 0 {
		return c < 0
	}
	return h.items[i].idx < h.items[j].idx
}
func (h *runHeap) Swap(i, j int) { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *runHeap) Push(x any)    { h.items = append(h.items, x.(runHead)) }
func (h *runHeap) Pop() any {
	last := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return last
}

// push adds src's first row, if any.
func (h *runHeap) push(src run, idx int) error {
	r, err := src.next()
	if err != nil || r == nil {
		return err
	}
	heap.Push(h, runHead{row: r, idx: idx, src: src})
	return nil
}

// advance replaces the smallest head by the next row of its run.
func (h *runHeap) advance() error {
	r, err := h.items[0].src.next()
	if err != nil {
		return err
	}
	if r == nil {
		heap.Pop(h)
		return nil
	}
	h.items[0].row = r
	heap.Fix(h, 0)
	return nil
}

// sortedOnDisk is sorted with an externalSort: the same rows in the same
// order, whatever their size.
func (x *executor) sortedOnDisk(ctx context.Context, q Query, out RowFunc) error {
	s := &externalSort{x: x, by: q.OrderBy, ts: q.Plan.Schema}
	defer s.close()
	err := x.run(ctx, q.Plan, func(_ context.Context, c *types.Chunk) error {
		for i := 0; i < c.Capacity(); i++ {
			if err := s.add(c.Row(i)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	skip, left := q.Offset, q.Limit
	err = s.each(ctx, func(r types.Row) error {
		if skip > 0 {
			skip--
			return nil
		}
		if left == 0 {
			return errStop
		}
		left--
		return out(r[:q.Visible])
	})
	if errors.Is(err, errStop) {
		return nil
	}
	return err
}
