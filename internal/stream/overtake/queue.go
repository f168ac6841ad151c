package overtake

import (
	"context"
	"fmt"
	"slices"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// Gate table columns: (actor index, gate, seq) → (op, row).
const (
	colIndex = iota
	colGate
	colSeq
	colOp
	colRow
)

// Table returns the shape of a gate table, shared by the gate's actors
// (keyed by their index); the engine gives it an id. The gate column
// leaves room for several gates in one table.
func Table() plan.Table {
	return plan.Table{
		Types:   []types.Type{types.TInt64, types.TInt64, types.TInt64, types.TInt64, types.TBytea},
		PK:      []int{colIndex, colGate, colSeq},
		DistKey: []int{colIndex},
	}
}

// CheckTable reports whether t is shaped as Table: a malformed plan is an
// error, never a panic.
func CheckTable(t plan.Table) error {
	want := Table()
	if !slices.Equal(t.Types, want.Types) || !slices.Equal(t.PK, want.PK) || !slices.Equal(t.DistKey, want.DistKey) ||
		len(t.Orders) != 0 {
		return fmt.Errorf("overtake: table %d is not shaped as a gate table", t.ID)
	}
	return nil
}

// MaxMemoryRows is the most queued rows a queue keeps in memory.
var MaxMemoryRows = 1 << 16

// entry is a queued chunk. seq is its row 0's sequence number, or -1
// while not stored; once stored, row i is seq+i and n counts its rows,
// visible or not, and chunk may be nil (spilled). rows are its visible
// rows.
type entry struct {
	chunk *types.Chunk
	seq   int64
	n     int
	rows  int
	// since is the time of the last barrier before the chunk came (0:
	// unknown, restored after a restart).
	since types.DTimestamptz
}

// Queue is one gate's queued chunks and their stored copy.
type Queue struct {
	table       *storage.StateTable
	index, gate int64
	types       []types.Type
	chunkSize   int
	entries     []entry
	// head is the lowest sequence number that may be stored; next is the
	// next to give.
	head, next int64
}

// NewQueue returns the queue of gate number gate of the actor at index.
func NewQueue(t *storage.StateTable, index, gate int, ts []types.Type, chunkSize int) *Queue {
	return &Queue{table: t, index: int64(index), gate: int64(gate), types: ts, chunkSize: max(chunkSize, 1)}
}

// Since is when the oldest queued chunk came: the time of the last
// barrier before it (0: none queued, or unknown after a restart).
func (q *Queue) Since() types.DTimestamptz {
	if len(q.entries) == 0 {
		return 0
	}
	return q.entries[0].since
}

// Len is the number of queued chunks.
func (q *Queue) Len() int { return len(q.entries) }

// Stored reports whether rows of the queue may be in the table.
func (q *Queue) Stored() bool { return q.head < q.next || q.unstored() }

func (q *Queue) unstored() bool {
	for _, e := range q.entries {
		if e.seq < 0 {
			return true
		}
	}
	return false
}

// Push queues c, which came after a barrier of time since.
func (q *Queue) Push(c *types.Chunk, since types.DTimestamptz) {
	q.entries = append(q.entries, entry{chunk: c, seq: -1, rows: c.Cardinality(), since: since})
}

// Pop takes the oldest chunk, read back from the table if it was spilled.
func (q *Queue) Pop(ctx context.Context) (*types.Chunk, error) {
	e := q.entries[0]
	if e.chunk == nil {
		c, err := q.load(ctx, e.seq, e.n)
		if err != nil {
			return nil, err
		}
		e.chunk = c
	}
	q.entries[0] = entry{}
	q.entries = q.entries[1:]
	return e.chunk, nil
}

// Checkpoint, at a barrier of epoch, stores the chunks not yet stored,
// deletes the rows of those taken since, drops stored chunks past
// MaxMemoryRows from memory, and seals the table.
func (q *Queue) Checkpoint(epoch uint64) error {
	for k := range q.entries {
		e := &q.entries[k]
		if e.seq >= 0 {
			continue
		}
		e.seq, e.n = q.next, e.chunk.Capacity()
		if err := q.write(e.chunk, e.seq); err != nil {
			return err
		}
		q.next = e.seq + int64(e.n)
	}
	live := q.next
	if len(q.entries) > 0 {
		live = q.entries[0].seq
	}
	for ; q.head < live; q.head++ {
		if err := q.table.Delete(q.key(q.head)); err != nil {
			return err
		}
	}
	q.spill()
	return q.table.Seal(epoch)
}

func (q *Queue) write(c *types.Chunk, seq int64) error {
	for i := range c.Capacity() {
		if !c.Visible(i) {
			continue
		}
		enc, err := codec.EncodeValue(nil, c.Row(i), q.types)
		if err != nil {
			return fmt.Errorf("overtake: queued row: %w", err)
		}
		if err := q.table.Insert(types.Row{q.index, q.gate, seq + int64(i), int64(c.Op(i)), enc}); err != nil {
			return err
		}
	}
	return nil
}

// key is a row with only its primary key set.
func (q *Queue) key(seq int64) types.Row { return types.Row{q.index, q.gate, seq, nil, nil} }

func (q *Queue) spill() {
	rows := 0
	for k := range q.entries {
		e := &q.entries[k]
		if e.chunk == nil {
			continue
		}
		rows += e.rows
		if rows > MaxMemoryRows {
			e.chunk = nil
		}
	}
}

// load reads back the n rows stored from seq on as one chunk; a sequence
// number without a row (an invisible row) is an invisible placeholder.
func (q *Queue) load(ctx context.Context, seq int64, n int) (*types.Chunk, error) {
	s := newSpan(q.types, seq)
	for i := range n {
		r, ok, err := q.table.Get(ctx, q.key(seq + int64(i))[:colOp])
		if err != nil {
			return nil, fmt.Errorf("overtake: read back queued input: %w", err)
		}
		if ok {
			if err := s.add(r, q.types); err != nil {
				return nil, err
			}
		}
	}
	s.n = n
	return s.chunk(), nil
}

// Restore reads back the queue stored before the actor last stopped, in
// spans of up to a chunk of sequence numbers, kept in memory up to
// MaxMemoryRows rows.
func (q *Queue) Restore(ctx context.Context) error {
	it, err := q.table.Scan(ctx, types.Row{q.index, q.gate})
	if err != nil {
		return fmt.Errorf("overtake: read queued input: %w", err)
	}
	defer func() { _ = it.Close() }()
	var cur *span
	kept := 0
	q.head = -1
	for {
		r, ok, err := it.Next()
		if err != nil {
			return fmt.Errorf("overtake: read queued input: %w", err)
		}
		if !ok {
			break
		}
		seq := r[colSeq].(int64)
		if q.head < 0 {
			q.head = seq
		}
		q.next = seq + 1
		if cur == nil || (seq-cur.seq >= int64(q.chunkSize) && !cur.pairOpen) {
			kept = q.flush(cur, kept)
			cur = newSpan(q.types, seq)
		}
		if err := cur.addKeep(r, q.types, kept < MaxMemoryRows); err != nil {
			return err
		}
	}
	q.flush(cur, kept)
	if q.head < 0 {
		q.head = 0
	}
	return nil
}

// flush queues span s, in memory if it kept its rows; it returns the rows
// now kept in memory.
func (q *Queue) flush(s *span, kept int) int {
	if s == nil {
		return kept
	}
	e := entry{seq: s.seq, n: s.n, rows: s.rows}
	if s.keep {
		e.chunk = s.chunk()
		kept += s.rows
	}
	q.entries = append(q.entries, e)
	return kept
}
