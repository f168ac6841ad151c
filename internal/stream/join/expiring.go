package join

import "github.com/sluice-db/sluice/internal/types"

// expiring holds a side's stored rows by their Col value, to delete those
// below a bound. Rows mostly arrive in Col order (event time, a little
// out of order across upstream actors), so a row goes to the end of one of
// a few sorted queues when it is not below that queue's last row: then
// storing and expiring it are O(1), where a heap paid a sift-down of
// log n cache misses per row (6 % of q7's CPU). Rows fitting no queue go
// to a min-heap. Times and integers (the usual Col) compare as int64
// keys; other types as datums, in the heap only.
type expiring struct {
	ints   bool
	queues []rowQueue
	heap   []expiringRow
}

// maxQueues bounds the sorted queues: each upstream actor's rows come in
// order, and more queues cost every push a longer search.
const maxQueues = 4

type expiringRow struct {
	k   int64       // x as an integer, when ints
	x   types.Datum // x itself, otherwise
	row types.Row   // the stored row (never modified once stored)
	tag int64       // the caller's, handed back with the row (deferred.go)
}

// rowQueue is a queue of rows in non-decreasing k, in blocks of
// queueBlock rows: blocks[0][head:] and the later blocks are live. One
// slice that grew by doubling and was compacted as its head advanced
// moved every row several times, with the GC's write barriers on each
// pointer (a twentieth of Nexmark q4, whose queues hold an epoch's bids).
type rowQueue struct {
	blocks [][]expiringRow
	head   int
	spare  [][]expiringRow // emptied blocks, for the next pushes
}

// queueBlock is the rows of a block (a variable for the test, which
// makes blocks tiny); spareBlocks the emptied blocks a queue keeps.
var queueBlock = 1024

const spareBlocks = 4

func (q *rowQueue) empty() bool {
	return len(q.blocks) == 0 || (len(q.blocks) == 1 && q.head == len(q.blocks[0]))
}

func (q *rowQueue) last() int64 {
	b := q.blocks[len(q.blocks)-1]
	return b[len(b)-1].k
}

// front returns the head row; the queue must not be empty.
func (q *rowQueue) front() *expiringRow { return &q.blocks[0][q.head] }

func (q *rowQueue) push(r expiringRow) {
	n := len(q.blocks)
	if n == 0 || len(q.blocks[n-1]) == queueBlock {
		var b []expiringRow
		if k := len(q.spare); k > 0 {
			b, q.spare = q.spare[k-1], q.spare[:k-1]
		} else {
			b = make([]expiringRow, 0, queueBlock)
		}
		q.blocks = append(q.blocks, b)
		n++
	}
	q.blocks[n-1] = append(q.blocks[n-1], r)
}

// pop drops the head row. An emptied block is kept for later pushes.
func (q *rowQueue) pop() {
	b := q.blocks[0]
	b[q.head] = expiringRow{}
	q.head++
	if q.head < len(b) {
		return
	}
	q.head = 0
	if len(q.blocks) == 1 {
		q.blocks[0] = b[:0]
		return
	}
	q.blocks[0] = nil
	q.blocks = q.blocks[1:]
	if len(q.spare) < spareBlocks {
		q.spare = append(q.spare, b[:0])
	}
}

func (h *expiring) empty() bool {
	for i := range h.queues {
		if !h.queues[i].empty() {
			return false
		}
	}
	return len(h.heap) == 0
}

func (h *expiring) push(x types.Datum, row types.Row, tag int64) {
	r := expiringRow{row: row, tag: tag}
	if !h.ints {
		r.x = x
		h.heapPush(r)
		return
	}
	r.k, _ = types.OrderInt64(x)
	if q := h.queueFor(r.k); q != nil {
		q.push(r)
		return
	}
	h.heapPush(r)
}

// queueFor returns the queue whose last row is the greatest not above k
// (keeping the queues tight), an empty or new queue, or nil.
func (h *expiring) queueFor(k int64) *rowQueue {
	var best, spare *rowQueue
	for i := range h.queues {
		q := &h.queues[i]
		if q.empty() {
			spare = q
		} else if l := q.last(); l <= k && (best == nil || l > best.last()) {
			best = q
		}
	}
	if best != nil {
		return best
	}
	if spare != nil {
		return spare
	}
	if len(h.queues) < maxQueues {
		h.queues = append(h.queues, rowQueue{})
		return &h.queues[len(h.queues)-1]
	}
	return nil
}

// drainBelow removes every row below bound, calling f with each and the
// tag it was pushed with.
func (h *expiring) drainBelow(bound types.Datum, f func(types.Row, int64) error) error {
	below := func(r *expiringRow) bool { return types.Compare(r.x, bound) < 0 }
	if h.ints {
		b, ok := types.OrderInt64(bound)
		if !ok {
			return nil
		}
		below = func(r *expiringRow) bool { return r.k < b }
		for i := range h.queues {
			q := &h.queues[i]
			for !q.empty() && below(q.front()) {
				r := *q.front()
				q.pop()
				if err := f(r.row, r.tag); err != nil {
					return err
				}
			}
		}
	}
	for len(h.heap) > 0 && below(&h.heap[0]) {
		r := h.heapPop()
		if err := f(r.row, r.tag); err != nil {
			return err
		}
	}
	return nil
}

func (h *expiring) less(i, j int) bool {
	if h.ints {
		return h.heap[i].k < h.heap[j].k
	}
	return types.Compare(h.heap[i].x, h.heap[j].x) < 0
}

func (h *expiring) heapPush(r expiringRow) {
	h.heap = append(h.heap, r)
	for i := len(h.heap) - 1; i > 0; {
		p := (i - 1) / 2
		if !h.less(i, p) {
			break
		}
		h.heap[i], h.heap[p] = h.heap[p], h.heap[i]
		i = p
	}
}

// heapPop removes the heap's least row and returns it.
func (h *expiring) heapPop() expiringRow {
	row := h.heap[0]
	n := len(h.heap) - 1
	h.heap[0] = h.heap[n]
	h.heap[n] = expiringRow{}
	h.heap = h.heap[:n]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < n && h.less(l, m) {
			m = l
		}
		if l+1 < n && h.less(l+1, m) {
			m = l + 1
		}
		if m == i {
			return row
		}
		h.heap[i], h.heap[m] = h.heap[m], h.heap[i]
		i = m
	}
}
