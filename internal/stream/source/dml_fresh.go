package source

import (
	"encoding/binary"
	"math"

	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/types"
)

// A fresh run is a DML record of plain inserts whose row ids are
// consecutive: a bulk load into a table keyed by a hidden row id. Its
// payload says so (version 2, with the row id column and the first id),
// so that the table source can hand its rows to the table's materialize
// still encoded (stream.FreshRows) without decoding a single one.

// FreshRun is the header of a version 2 payload: row k of the record is
// a plain insert with row id First+k in column IDCol.
type FreshRun struct {
	IDCol int
	First int64
}

// EncodeTableDML encodes c like EncodeDML and, when rowIDCol ≥ 0 and c's
// visible rows are plain inserts whose ids in that int64 column are
// consecutive, marks the payload as a fresh run.
func EncodeTableDML(c *types.Chunk, rowIDCol int) ([]byte, error) {
	return AppendTableDML(nil, c, rowIDCol)
}

// AppendTableDML is EncodeTableDML writing into dst's storage (a buffer
// reused once its payload is written out).
func AppendTableDML(dst []byte, c *types.Chunk, rowIDCol int) ([]byte, error) {
	return appendPayload(dst, c, freshRunOf(c, rowIDCol))
}

// freshRunOf returns c's fresh run header, or nil when c is not one.
func freshRunOf(c *types.Chunk, col int) *FreshRun {
	if col < 0 || col >= len(c.Cols) || c.Cardinality() == 0 {
		return nil
	}
	ids, ok := c.Cols[col].(*types.Vec[int64])
	if !ok || ids.Typ.ID != types.Int64 {
		return nil
	}
	run, n := &FreshRun{IDCol: col}, int64(0)
	for i := range c.Capacity() {
		if !c.Visible(i) {
			continue
		}
		if c.Op(i) != types.Insert || ids.IsNull(i) || (n > 0 && ids.Vals[i] != run.First+n) {
			return nil
		}
		if n == 0 {
			run.First = ids.Vals[i]
		}
		n++
	}
	return run
}

// freshHeader reads a version 2 payload's run header.
func (r *dmlReader) freshHeader(ts []types.Type) (*FreshRun, error) {
	col, err := r.uvarint("row id column")
	if err != nil {
		return nil, err
	}
	if col >= uint64(len(ts)) || ts[col].ID != types.Int64 {
		return nil, corrupt("row id column %d of %d is not bigint", col, len(ts))
	}
	first, k := binary.Varint(r.b)
	if k <= 0 {
		return nil, corrupt("bad first row id")
	}
	r.b = r.b[k:]
	return &FreshRun{IDCol: int(col), First: first}, nil
}

// checkRun rejects a run whose last id would overflow.
func (c *dmlCursor) checkRun() error {
	if c.run != nil && c.rows > 0 && c.run.First > math.MaxInt64-int64(c.rows-1) {
		return corrupt("row ids from %d overflow over %d rows", c.run.First, c.rows)
	}
	return nil
}

// fresh returns the next max rows of a fresh run still encoded, or nil
// when the payload is not a fresh run (or is 4 GiB or more: spans are
// 32-bit) or no row is left.
func (c *dmlCursor) fresh(max int) (*stream.FreshRows, error) {
	if c.run == nil || c.next >= c.rows || len(c.payload) > math.MaxUint32 {
		return nil, nil
	}
	ids := make([]int64, min(max, c.rows-c.next))
	for k := range ids {
		ids[k] = c.run.First + int64(c.next+k)
	}
	spans, err := c.spans(len(ids), true)
	if err != nil {
		return nil, err
	}
	rows := storage.EncodedRows{Buf: c.payload, Spans: spans}
	return &stream.FreshRows{IDCol: c.run.IDCol, IDs: ids, Rows: rows}, nil
}

// spans passes over the next n rows and returns where each row's value
// encoding lies in the payload (two offsets a row); inserts requires every
// row to be a plain insert.
func (c *dmlCursor) spans(n int, inserts bool) ([]uint32, error) {
	body := len(c.payload) - 4 // the checksum follows the rows
	spans := make([]uint32, 0, 2*n)
	for range n {
		r := c.r
		if len(r.b) == 0 {
			return nil, corrupt("missing op")
		}
		if inserts && types.Op(r.b[0]) != types.Insert {
			return nil, corrupt("op %d in a fresh run", r.b[0])
		}
		r.b = r.b[1:]
		size, err := r.uvarint("row length")
		if err != nil {
			return nil, err
		}
		if size > uint64(len(r.b)) {
			return nil, corrupt("row length %d exceeds payload", size)
		}
		start := body - len(r.b)
		spans = append(spans, uint32(start), uint32(start+int(size)))
		r.b = r.b[size:]
		c.next++
	}
	return spans, c.checkEnd()
}
