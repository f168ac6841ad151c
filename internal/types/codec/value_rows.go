package codec

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/sluice-db/sluice/internal/types"
)

// RowEncoder is EncodeValueColumns for many rows of the same columns: each
// column's vector and type are resolved once, not per value (a bulk COPY
// encodes millions of rows, and the per-value interface calls and type
// switches were half of EncodeValueColumns' time).
type RowEncoder struct {
	cols []colEncoder
	nb   int // bytes of the NULL bitmap
}

type encKind uint8

const (
	encOther encKind = iota // appendValueAt, through the Column interface
	encInt
	encFloat
	encString
	encBool
	encTimestamp
	encTimestamptz
)

// colEncoder is one column, its vector held by the kind's field.
type colEncoder struct {
	kind   encKind
	nulls  types.Bitmap
	col    types.Column
	ints   []int64
	floats []float64
	strs   []string
	bools  []bool
	ts     []types.DTimestamp
	tstz   []types.DTimestamptz
}

// NewRowEncoder returns an encoder of rows of cols. The columns must not
// change while it is used.
func NewRowEncoder(cols []types.Column) *RowEncoder {
	e := &RowEncoder{cols: make([]colEncoder, len(cols)), nb: (len(cols) + 7) / 8}
	for j, c := range cols {
		e.cols[j] = newColEncoder(c)
	}
	return e
}

func newColEncoder(c types.Column) colEncoder {
	ce := colEncoder{col: c}
	switch id := c.Type().ID; v := c.(type) {
	case *types.Vec[int64]:
		if id == types.Int16 || id == types.Int32 || id == types.Int64 {
			ce.kind, ce.nulls, ce.ints = encInt, v.Nulls, v.Vals
		}
	case *types.Vec[float64]:
		if id == types.Float32 || id == types.Float64 {
			ce.kind, ce.nulls, ce.floats = encFloat, v.Nulls, v.Vals
		}
	case *types.Vec[string]:
		if id == types.Varchar {
			ce.kind, ce.nulls, ce.strs = encString, v.Nulls, v.Vals
		}
	case *types.Vec[bool]:
		if id == types.Bool {
			ce.kind, ce.nulls, ce.bools = encBool, v.Nulls, v.Vals
		}
	case *types.Vec[types.DTimestamp]:
		if id == types.Timestamp {
			ce.kind, ce.nulls, ce.ts = encTimestamp, v.Nulls, v.Vals
		}
	case *types.Vec[types.DTimestamptz]:
		if id == types.Timestamptz {
			ce.kind, ce.nulls, ce.tstz = encTimestamptz, v.Nulls, v.Vals
		}
	}
	return ce
}

// Append appends the value encoding of row i to dst: the bytes of
// EncodeValueColumns(dst, cols, i). On error dst is returned unchanged.
func (e *RowEncoder) Append(dst []byte, i int) ([]byte, error) {
	start := len(dst)
	for range e.nb {
		dst = append(dst, 0)
	}
	for j := range e.cols {
		c := &e.cols[j]
		if c.kind == encOther {
			var err error
			if dst, err = c.appendOther(dst, start, j, i); err != nil {
				return dst[:start], err
			}
			continue
		}
		if c.nulls.Get(i) {
			dst[start+j/8] |= 1 << (j % 8)
			continue
		}
		switch c.kind {
		case encInt:
			dst = binary.AppendVarint(dst, c.ints[i])
		case encFloat:
			dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(c.floats[i]))
		case encString:
			dst = append(binary.AppendUvarint(dst, uint64(len(c.strs[i]))), c.strs[i]...)
		case encBool:
			dst = appendKeyBool(dst, c.bools[i])
		case encTimestamp:
			dst = binary.AppendVarint(dst, int64(c.ts[i]))
		case encTimestamptz:
			dst = binary.AppendVarint(dst, int64(c.tstz[i]))
		}
	}
	return dst, nil
}

// appendOther appends column j of row i through the Column interface.
func (c *colEncoder) appendOther(dst []byte, start, j, i int) ([]byte, error) {
	if c.col.IsNull(i) {
		dst[start+j/8] |= 1 << (j % 8)
		return dst, nil
	}
	out, err := appendValueAt(dst, c.col, i)
	if err != nil {
		return dst, fmt.Errorf("codec: value column %d: %w", j, err)
	}
	return out, nil
}
