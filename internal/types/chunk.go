package types

import "fmt"

// Op is what a row of a stream chunk does to the relation it describes.
type Op uint8

// The four row ops. An update is a pair of adjacent rows, UpdateDelete then
// UpdateInsert; executors that cannot keep the pair together (a hash
// dispatcher sending old and new to different actors) turn them into a plain
// Delete and Insert.
const (
	Insert Op = iota
	Delete
	UpdateDelete
	UpdateInsert
)

// String returns the text-form sign of the op.
func (o Op) String() string {
	switch o {
	case Insert:
		return "+"
	case Delete:
		return "-"
	case UpdateDelete:
		return "U-"
	case UpdateInsert:
		return "U+"
	}
	return fmt.Sprintf("op(%d)", uint8(o))
}

// IsInsert reports whether the row adds to the relation (Insert or
// UpdateInsert).
func (o Op) IsInsert() bool { return o == Insert || o == UpdateInsert }

// Normalize maps UpdateDelete to Delete and UpdateInsert to Insert.
func (o Op) Normalize() Op {
	if o.IsInsert() {
		return Insert
	}
	return Delete
}

// DefaultChunkSize is the number of rows executors aim for per chunk.
const DefaultChunkSize = 1024

// Chunk is a batch of rows in columnar form. Ops is nil for a batch (all
// rows are inserts). Vis is nil when every row is visible; otherwise only
// rows whose bit is set are part of the chunk.
type Chunk struct {
	Cols []Column
	Ops  []Op
	Vis  Bitmap
	// hasVis distinguishes "no mask" (nil) from "mask with all bits clear".
	hasVis bool
}

// NewChunk returns a chunk over the given columns, all rows visible. ops may
// be nil (all inserts).
func NewChunk(cols []Column, ops []Op) *Chunk {
	return &Chunk{Cols: cols, Ops: ops}
}

// Capacity returns the number of rows, visible or not.
func (c *Chunk) Capacity() int {
	if len(c.Cols) > 0 {
		return c.Cols[0].Len()
	}
	return len(c.Ops)
}

// Visible reports whether row i is visible.
func (c *Chunk) Visible(i int) bool { return !c.hasVis || c.Vis.Get(i) }

// SetVisibility replaces the visibility mask; rows whose bit is clear are
// hidden.
func (c *Chunk) SetVisibility(vis Bitmap) {
	c.Vis = vis
	c.hasVis = true
}

// HasVisibility reports whether a mask is in force.
func (c *Chunk) HasVisibility() bool { return c.hasVis }

// Cardinality returns the number of visible rows.
func (c *Chunk) Cardinality() int {
	if !c.hasVis {
		return c.Capacity()
	}
	return c.Vis.Count()
}

// Op returns the op of row i (Insert when the chunk has no ops).
func (c *Chunk) Op(i int) Op {
	if c.Ops == nil {
		return Insert
	}
	return c.Ops[i]
}

// Row returns row i as datums.
func (c *Chunk) Row(i int) Row {
	r := make(Row, len(c.Cols))
	for j, col := range c.Cols {
		r[j] = col.Get(i)
	}
	return r
}

// Types returns the column types.
func (c *Chunk) Types() []Type {
	ts := make([]Type, len(c.Cols))
	for i, col := range c.Cols {
		ts[i] = col.Type()
	}
	return ts
}

// VisibleIndices returns the indices of the visible rows.
func (c *Chunk) VisibleIndices() []int {
	n := c.Capacity()
	idx := make([]int, 0, n)
	for i := 0; i < n; i++ {
		if c.Visible(i) {
			idx = append(idx, i)
		}
	}
	return idx
}

// Compact returns a chunk holding only the visible rows, with no mask. It
// returns c itself when every row is already visible.
func (c *Chunk) Compact() *Chunk {
	if !c.hasVis {
		return c
	}
	idx := c.VisibleIndices()
	cols := make([]Column, len(c.Cols))
	for j, col := range c.Cols {
		cols[j] = col.Gather(idx)
	}
	var ops []Op
	if c.Ops != nil {
		ops = make([]Op, len(idx))
		for k, i := range idx {
			ops[k] = c.Ops[i]
		}
	}
	return &Chunk{Cols: cols, Ops: ops}
}

// Project returns a chunk sharing c's rows but holding only the columns at
// idx, in that order.
func (c *Chunk) Project(idx []int) *Chunk {
	cols := make([]Column, len(idx))
	for k, i := range idx {
		cols[k] = c.Cols[i]
	}
	return &Chunk{Cols: cols, Ops: c.Ops, Vis: c.Vis, hasVis: c.hasVis}
}

// WithColumns returns a chunk with c's ops and visibility over new columns
// of the same length.
func (c *Chunk) WithColumns(cols []Column) *Chunk {
	return &Chunk{Cols: cols, Ops: c.Ops, Vis: c.Vis, hasVis: c.hasVis}
}

// Builder accumulates rows into chunks of a target size. Its columns are
// allocated at the first row of each chunk, sized by the chunk before (a
// builder cut at full chunks allocates them whole; one that takes a row
// or two at a time, as a single-row INSERT does, allocates little).
type Builder struct {
	types []Type
	size  int
	cols  []Column
	ops   []Op
	// last is the length of the chunk taken before, the next one's guess.
	last int
	// unbounded: Append never returns a chunk (NewUnboundedBuilder).
	unbounded bool
	// unread marks columns nobody reads (Unread); nil: none. nulls holds
	// the NULLs a taken chunk's unread column is a head of.
	unread []bool
	nulls  NullHeads
}

// minBuilderCap is the smallest capacity a builder's columns start with.
const minBuilderCap = 4

// NewBuilder returns a builder of chunks with the given column types that
// holds at most size rows per chunk.
func NewBuilder(ts []Type, size int) *Builder {
	if size <= 0 {
		size = DefaultChunkSize
	}
	// The first chunk starts small and grows as rows come: a builder made
	// per statement or per message mostly holds a row or two, and sizing
	// its columns for a whole chunk cost kilobytes a row (a third of the
	// allocation of single-row INSERTs into a table with views). Later
	// chunks start at the size of the one before.
	return &Builder{types: ts, size: size, last: minBuilderCap}
}

// NewUnboundedBuilder returns a builder that never cuts a chunk: Take
// returns every row appended since the last Take (a whole statement's rows,
// kept as column vectors).
func NewUnboundedBuilder(ts []Type) *Builder {
	b := NewBuilder(ts, DefaultChunkSize)
	b.unbounded = true
	return b
}

// Unread marks the columns that nothing reads (nil: none): Append leaves
// out their values, and every chunk taken holds NULLs there, heads of one
// column of NULLs the builder keeps (NullHeads). A join's output carries
// both inputs' columns, of which the projection above it often keeps a
// few (Nexmark q4's join: a new column of NULLs per unread column was 15 %
// of what the query allocated). It is meant for builders filled by Append
// only: the other Append methods still copy those columns (Take replaces
// them), and a fill callback would see columns of different lengths.
func (b *Builder) Unread(cols []bool) error {
	if cols != nil && len(cols) != len(b.types) {
		return fmt.Errorf("types: %d unread marks for %d columns", len(cols), len(b.types))
	}
	b.unread = cols
	return nil
}

func (b *Builder) isUnread(i int) bool { return b.unread != nil && b.unread[i] }

// start allocates the columns of a new chunk.
func (b *Builder) start() {
	n := min(max(b.last, minBuilderCap), b.size)
	b.cols = make([]Column, len(b.types))
	for i, t := range b.types {
		if b.isUnread(i) {
			b.cols[i] = MustColumn(t, 0)
			continue
		}
		b.cols[i] = MustColumn(t, n)
	}
	b.ops = make([]Op, 0, n)
}

// Append adds a row. It returns a full chunk when the row filled one, else
// nil.
func (b *Builder) Append(op Op, row Row) *Chunk {
	if b.cols == nil {
		b.start()
	}
	for i, d := range row {
		if !b.isUnread(i) {
			b.cols[i].Append(d)
		}
	}
	b.ops = append(b.ops, op)
	if !b.unbounded && len(b.ops) >= b.size {
		return b.Take()
	}
	return nil
}

// AppendFrom adds row i of chunk src (same column types) with the given op.
func (b *Builder) AppendFrom(op Op, src *Chunk, i int) *Chunk {
	if b.cols == nil {
		b.start()
	}
	for j, col := range src.Cols {
		b.cols[j].AppendFrom(col, i)
	}
	b.ops = append(b.ops, op)
	if !b.unbounded && len(b.ops) >= b.size {
		return b.Take()
	}
	return nil
}

// AppendColumns adds a row whose values fill appends, one to each column
// (in any order), straight into the chunk's column vectors. When fill
// fails the builder is left with a partial row and must be discarded.
func (b *Builder) AppendColumns(op Op, fill func(cols []Column) error) (*Chunk, error) {
	if b.cols == nil {
		b.start()
	}
	if err := fill(b.cols); err != nil {
		return nil, err
	}
	b.ops = append(b.ops, op)
	if !b.unbounded && len(b.ops) >= b.size {
		return b.Take(), nil
	}
	return nil, nil
}

// AppendRange adds rows [from, to) of src (same column types) with their
// ops, column by column. The builder must have room for them all: it cuts
// no chunk.
func (b *Builder) AppendRange(src *Chunk, from, to int) {
	if b.cols == nil {
		b.start()
	}
	for j, col := range src.Cols {
		b.cols[j].AppendRange(col, from, to)
	}
	for i := from; i < to; i++ {
		b.ops = append(b.ops, src.Op(i))
	}
}

// Recycle gives the builder c's column vectors to fill again, emptied,
// instead of allocating new ones for its next chunk (a bulk COPY's
// pieces: 73 MB of columns per million rows). The caller must hold the
// only reference to c, which must have the builder's column types and no
// visibility mask. It does nothing while the builder holds rows.
func (b *Builder) Recycle(c *Chunk) {
	if b.cols != nil || c == nil || c.HasVisibility() || len(c.Cols) != len(b.types) {
		return
	}
	for i, col := range c.Cols {
		if col.Type() != b.types[i] {
			return
		}
	}
	for _, col := range c.Cols {
		col.Reset()
	}
	b.cols, b.ops = c.Cols, c.Ops[:0]
}

// nullsOf returns n NULLs for unread column i.
func (b *Builder) nullsOf(i, n int) Column {
	if b.nulls.types == nil {
		b.nulls = NullHeads{types: b.types, size: b.size}
	}
	return b.nulls.Get(i, n)
}

// NullHeads hands out columns of NULLs as heads of one column kept per
// column (Head): a builder's unread columns, a hop window's. A NullHeads
// is used by one goroutine at a time; the heads may go anywhere.
type NullHeads struct {
	types []Type
	size  int // the fewest rows a kept column holds
	cols  []Column
}

// NewNullHeads returns the NULLs of columns of types ts, kept in columns
// of at least size rows.
func NewNullHeads(ts []Type, size int) *NullHeads { return &NullHeads{types: ts, size: size} }

// Get returns n NULLs of column i's type.
func (h *NullHeads) Get(i, n int) Column {
	if h.cols == nil {
		h.cols = make([]Column, len(h.types))
	}
	if c := h.cols[i]; c == nil || c.Len() < n {
		h.cols[i] = NullColumn(h.types[i], max(n, h.size))
	}
	return Head(h.cols[i], n)
}

// Len returns the number of buffered rows.
func (b *Builder) Len() int { return len(b.ops) }

// Take returns the buffered rows as a chunk (nil when empty) and starts a
// new one.
func (b *Builder) Take() *Chunk {
	if len(b.ops) == 0 {
		return nil
	}
	for i := range b.types {
		if b.isUnread(i) {
			b.cols[i] = b.nullsOf(i, len(b.ops))
		}
	}
	c := &Chunk{Cols: b.cols, Ops: b.ops}
	b.last, b.cols, b.ops = len(b.ops), nil, nil
	return c
}
