package codec

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/sluice-db/sluice/internal/types"
)

// Column-wise value coding: the same bytes as EncodeValue/DecodeValue, but
// the values go to and from typed column vectors (*types.Vec[T]) instead of
// a Row of boxed datums. Boxing costs an allocation for most datums (an
// int64 above 255, a DInterval, a string header), which made decoding a
// 1024-row chunk cost ~6 allocations per row; rebuilding a chunk from
// stored rows should not pay for a Row it throws away.

// DecodeValueInto decodes a row written by EncodeValue with types ts and
// appends it to cols, one column per type, each a column of that type as
// types.NewColumn makes it. It accepts and rejects exactly the inputs
// DecodeValue does (errors wrap ErrCorrupt the same way); a column of the
// wrong Go type is an error too. On error every column is left as it was,
// so a caller can skip a bad row and keep the chunk. Strings and bytes are
// copied, never aliasing src.
func DecodeValueInto(src []byte, ts []types.Type, cols []types.Column) error {
	return decodeValueInto(src, ts, cols, nil, nil)
}

// ColumnDecoder is DecodeValueInto for a run of rows, typically a chunk
// rebuilt from stored rows: the numerics it decodes are carved from shared
// slabs of slabRows values, so a chunk pays one numeric allocation per
// slab instead of one per value. A numeric keeps its slab alive, which is
// why the slab is sized to the chunk, not larger. The zero value
// allocates each numeric alone. Not safe for concurrent use.
type ColumnDecoder struct {
	slabRows int
	slab     []decimal
}

// NewColumnDecoder returns a decoder whose numeric slabs hold slabRows
// values (at least 1).
func NewColumnDecoder(slabRows int) *ColumnDecoder {
	return &ColumnDecoder{slabRows: max(slabRows, 1)}
}

// DecodeInto is DecodeValueInto, drawing numerics from d's slabs.
func (d *ColumnDecoder) DecodeInto(src []byte, ts []types.Type, cols []types.Column) error {
	return decodeValueInto(src, ts, cols, d, nil)
}

// DecodeOnly is DecodeInto for a reader of some columns: column i is
// decoded when only[i] is true and otherwise skipped and appended as NULL
// (its bytes are still checked for shape). only nil decodes every column.
func (d *ColumnDecoder) DecodeOnly(src []byte, ts []types.Type, cols []types.Column, only []bool) error {
	if only != nil && len(only) != len(ts) {
		return fmt.Errorf("codec: column mask of %d for %d types", len(only), len(ts))
	}
	return decodeValueInto(src, ts, cols, d, only)
}

// newDecimal returns a zero numeric, from the current slab when there is
// one.
func (d *ColumnDecoder) newDecimal() *decimal {
	if d == nil || d.slabRows <= 1 {
		return new(decimal)
	}
	if len(d.slab) == 0 {
		d.slab = make([]decimal, d.slabRows)
	}
	x := &d.slab[0]
	d.slab = d.slab[1:]
	return x
}

func decodeValueInto(src []byte, ts []types.Type, cols []types.Column, dec *ColumnDecoder, only []bool) error {
	if len(cols) != len(ts) {
		return fmt.Errorf("codec: %d columns for %d types", len(cols), len(ts))
	}
	nb := (len(ts) + 7) / 8
	if len(src) < nb {
		return fmt.Errorf("%w: value shorter than its null bitmap", ErrCorrupt)
	}
	if extra := len(ts) % 8; extra != 0 && src[nb-1]>>extra != 0 {
		return fmt.Errorf("%w: null bit past the last column", ErrCorrupt)
	}
	r := valueReader{b: src[nb:]}
	for i, t := range ts {
		var err error
		switch {
		case src[i/8]&(1<<(i%8)) != 0:
			cols[i].Append(nil)
		case only != nil && !only[i]:
			if err = r.skip(t); err == nil {
				cols[i].Append(nil)
			}
		default:
			err = r.appendTo(cols[i], t, dec)
		}
		if err != nil {
			undoAppend(cols[:i])
			return fmt.Errorf("codec: value column %d (%s): %w", i, t, err)
		}
	}
	if len(r.b) != 0 {
		undoAppend(cols)
		return fmt.Errorf("%w: %d trailing bytes after value", ErrCorrupt, len(r.b))
	}
	return nil
}

// skip consumes one non-NULL value of type t without building it.
func (r *valueReader) skip(t types.Type) error {
	var err error
	switch t.ID {
	case types.Int16, types.Int32, types.Int64, types.Date, types.Time, types.Timestamp, types.Timestamptz:
		_, err = r.varint()
	case types.Float32, types.Float64:
		_, err = r.float64()
	case types.Varchar, types.Bytea:
		var n uint64
		if n, err = r.uvarint(); err == nil {
			if n > uint64(len(r.b)) {
				return fmt.Errorf("%w: length %d past end", ErrCorrupt, n)
			}
			r.b = r.b[n:]
		}
	default: // rare and variable-length: decode and drop
		_, err = r.datum(t)
	}
	return err
}

// appendTo decodes one non-NULL value of type t and appends it to col.
// Nothing is appended on error.
func (r *valueReader) appendTo(col types.Column, t types.Type, dec *ColumnDecoder) error {
	switch t.ID {
	case types.Bool:
		d, err := r.bool()
		return appendTyped(col, t, d, err, func(v *types.Vec[bool]) { v.AppendValue(d.(bool)) })
	case types.Int16, types.Int32, types.Int64:
		lo, hi := t.IntRange()
		x, err := r.varintIn(lo, hi)
		return appendTyped(col, t, nil, err, func(v *types.Vec[int64]) { v.AppendValue(x) })
	case types.Float32, types.Float64:
		x, err := r.float64()
		return appendTyped(col, t, nil, err, func(v *types.Vec[float64]) { v.AppendValue(x) })
	case types.Decimal:
		d := dec.newDecimal()
		err := r.decimalInto(d)
		return appendTyped(col, t, nil, err, func(v *types.Vec[*decimal]) { v.AppendValue(d) })
	case types.Varchar:
		s, err := r.string()
		return appendTyped(col, t, nil, err, func(v *types.Vec[string]) { v.AppendValue(s) })
	case types.Bytea:
		b, err := r.bytes()
		return appendTyped(col, t, nil, err, func(v *types.Vec[[]byte]) { v.AppendValue(b) })
	case types.Interval:
		x, err := r.intervalValue()
		return appendTyped(col, t, nil, err, func(v *types.Vec[types.DInterval]) { v.AppendValue(x) })
	case types.Array:
		d, err := r.array(t)
		return appendTyped(col, t, d, err, func(v *types.Vec[types.DArray]) { v.AppendValue(d.(types.DArray)) })
	}
	return r.appendTemporal(col, t)
}

func (r *valueReader) appendTemporal(col types.Column, t types.Type) error {
	switch t.ID {
	case types.Date:
		x, err := r.varintIn(math.MinInt32, math.MaxInt32)
		return appendTyped(col, t, nil, err, func(v *types.Vec[types.DDate]) { v.AppendValue(types.DDate(x)) })
	case types.Time:
		x, err := r.varint()
		return appendTyped(col, t, nil, err, func(v *types.Vec[types.DTime]) { v.AppendValue(types.DTime(x)) })
	case types.Timestamp:
		x, err := r.varint()
		return appendTyped(col, t, nil, err, func(v *types.Vec[types.DTimestamp]) { v.AppendValue(types.DTimestamp(x)) })
	case types.Timestamptz:
		x, err := r.varint()
		return appendTyped(col, t, nil, err, func(v *types.Vec[types.DTimestamptz]) { v.AppendValue(types.DTimestamptz(x)) })
	}
	return fmt.Errorf("codec: no value encoding for %s", t)
}

// appendTyped runs add on col as a *types.Vec[T] when the read succeeded;
// the unused datum argument only keeps the call sites uniform.
func appendTyped[T any](col types.Column, t types.Type, _ types.Datum, err error, add func(*types.Vec[T])) error {
	if err != nil {
		return err
	}
	v, ok := col.(*types.Vec[T])
	if !ok {
		return fmt.Errorf("codec: %T column for %s", col, t)
	}
	add(v)
	return nil
}

// undoAppend removes the last row of each column (the row a failed
// DecodeValueInto had appended so far).
func undoAppend(cols []types.Column) {
	for _, c := range cols {
		truncateColumn(c, c.Len()-1)
	}
}

func truncateColumn(c types.Column, n int) {
	switch v := c.(type) {
	case *types.Vec[bool]:
		truncateVec(v, n)
	case *types.Vec[int64]:
		truncateVec(v, n)
	case *types.Vec[float64]:
		truncateVec(v, n)
	case *types.Vec[*decimal]:
		truncateVec(v, n)
	case *types.Vec[string]:
		truncateVec(v, n)
	case *types.Vec[[]byte]:
		truncateVec(v, n)
	case *types.Vec[types.DInterval]:
		truncateVec(v, n)
	case *types.Vec[types.DArray]:
		truncateVec(v, n)
	default:
		truncateTemporal(c, n)
	}
}

func truncateTemporal(c types.Column, n int) {
	switch v := c.(type) {
	case *types.Vec[types.DDate]:
		truncateVec(v, n)
	case *types.Vec[types.DTime]:
		truncateVec(v, n)
	case *types.Vec[types.DTimestamp]:
		truncateVec(v, n)
	case *types.Vec[types.DTimestamptz]:
		truncateVec(v, n)
	}
}

// truncateVec shortens v to n rows, clearing the dropped rows' NULL bits
// so that a later AppendValue at those positions is not read as NULL.
func truncateVec[T any](v *types.Vec[T], n int) {
	var zero T
	for i := n; i < len(v.Vals); i++ {
		v.Nulls.Clear(i)
		v.Vals[i] = zero // drop references for the GC
	}
	v.Vals = v.Vals[:n]
}

// EncodeValueColumns appends the value encoding of row i of cols to dst:
// the same bytes as EncodeValue of cols' row i typed by the columns' types,
// without boxing each value. A column that is not the *types.Vec[T] of its
// type is an error; on error dst is returned unchanged.
func EncodeValueColumns(dst []byte, cols []types.Column, i int) ([]byte, error) {
	start := len(dst)
	for range (len(cols) + 7) / 8 {
		dst = append(dst, 0)
	}
	var err error
	for j, c := range cols {
		if c.IsNull(i) {
			dst[start+j/8] |= 1 << (j % 8)
			continue
		}
		if dst, err = appendValueAt(dst, c, i); err != nil {
			return dst[:start], fmt.Errorf("codec: value column %d: %w", j, err)
		}
	}
	return dst, nil
}

// appendValueAt appends the value encoding of non-NULL row i of c. The
// common scalar vectors skip boxing; the rest go through appendValueDatum.
func appendValueAt(dst []byte, c types.Column, i int) ([]byte, error) {
	t := c.Type()
	switch v := c.(type) {
	case *types.Vec[int64]:
		if t.ID == types.Int16 || t.ID == types.Int32 || t.ID == types.Int64 {
			return binary.AppendVarint(dst, v.Vals[i]), nil
		}
	case *types.Vec[float64]:
		if t.ID == types.Float32 || t.ID == types.Float64 {
			return binary.LittleEndian.AppendUint64(dst, math.Float64bits(v.Vals[i])), nil
		}
	case *types.Vec[string]:
		if t.ID == types.Varchar {
			return append(binary.AppendUvarint(dst, uint64(len(v.Vals[i]))), v.Vals[i]...), nil
		}
	case *types.Vec[*decimal]:
		if t.ID == types.Decimal && v.Vals[i] != nil {
			return appendValueDecimal(dst, v.Vals[i])
		}
	case *types.Vec[bool]:
		if t.ID == types.Bool {
			return appendKeyBool(dst, v.Vals[i]), nil
		}
	case *types.Vec[types.DTimestamp]:
		if t.ID == types.Timestamp {
			return binary.AppendVarint(dst, int64(v.Vals[i])), nil
		}
	case *types.Vec[types.DTimestamptz]:
		if t.ID == types.Timestamptz {
			return binary.AppendVarint(dst, int64(v.Vals[i])), nil
		}
	case *types.Vec[types.DDate]:
		if t.ID == types.Date {
			return binary.AppendVarint(dst, int64(v.Vals[i])), nil
		}
	case *types.Vec[types.DTime]:
		if t.ID == types.Time {
			return binary.AppendVarint(dst, int64(v.Vals[i])), nil
		}
	}
	return appendValueDatum(dst, c.Get(i), t)
}
