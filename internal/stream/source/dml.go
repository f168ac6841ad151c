package source

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"

	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// ErrCorruptDML is wrapped by every DecodeDML error caused by a payload that
// is not a well-formed, intact encoding for the expected column types.
var ErrCorruptDML = errors.New("source: corrupt dml payload")

// The DML payload format (one record of a table's DML log):
//
//	'D' version (1, or 2 for a fresh run: dml_fresh.go)
//	uvarint ncols, then one type-ID byte per column
//	version 2 only: uvarint row-id column, varint first row id
//	uvarint nrows
//	per row: op byte, uvarint length, codec.EncodeValue bytes
//	crc32c (4 bytes, little endian) of everything before it
//
// The column types are stored so that a payload read back against a
// different schema is rejected rather than misread, and the checksum turns
// any flipped bit into an error instead of a silently different row (Pebble
// checksums blocks, but a payload also travels through the SQL layer).
const (
	dmlMagic        = 'D'
	dmlVersion      = 1
	dmlVersionFresh = 2
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// EncodeDML encodes the visible rows of c, with their ops, as a DML log
// payload. The SQL layer writes it with store.AppendDML; the table source
// reads it back with DecodeDML.
func EncodeDML(c *types.Chunk) ([]byte, error) {
	return encodeDML(c, nil)
}

func encodeDML(c *types.Chunk, run *FreshRun) ([]byte, error) {
	return appendPayload(nil, c, run)
}

// appendPayload writes c's payload into dst's storage, or into a new
// buffer of the payload's estimated size when dst's is too small.
func appendPayload(dst []byte, c *types.Chunk, run *FreshRun) ([]byte, error) {
	ts := c.Types()
	buf := dst[:0]
	if need := 32 + len(ts) + encodedSize(c); cap(buf) < need {
		if dst != nil {
			// A buffer reused piece after piece (engine.Prepare's): a
			// quarter more, as the next piece's guess, from its own
			// first rows, is as often a little larger.
			need += need / 4
		}
		// Not slices.Grow: it would copy dst's old capacity along.
		buf = make([]byte, 0, need)
	}
	version := byte(dmlVersion)
	if run != nil {
		version = dmlVersionFresh
	}
	buf = append(buf, dmlMagic, version)
	buf = binary.AppendUvarint(buf, uint64(len(ts)))
	for _, t := range ts {
		buf = append(buf, byte(t.ID))
	}
	if run != nil {
		buf = binary.AppendUvarint(buf, uint64(run.IDCol))
		buf = binary.AppendVarint(buf, run.First)
	}
	buf = binary.AppendUvarint(buf, uint64(c.Cardinality()))
	enc := codec.NewRowEncoder(c.Cols)
	for i := range c.Capacity() {
		if !c.Visible(i) {
			continue
		}
		var err error
		if buf, err = appendDMLRow(buf, enc, c.Op(i), i); err != nil {
			return nil, fmt.Errorf("source: encode dml row %d: %w", i, err)
		}
	}
	return binary.LittleEndian.AppendUint32(buf, crc32.Checksum(buf, crcTable)), nil
}

// appendDMLRow appends row i: its op, its length and its value encoding.
// The value is encoded in place behind a one-byte length, moved along
// when its length needs more bytes (a row of 128 bytes or more).
func appendDMLRow(buf []byte, enc *codec.RowEncoder, op types.Op, i int) ([]byte, error) {
	buf = append(buf, byte(op), 0)
	at := len(buf)
	buf, err := enc.Append(buf, i)
	if err != nil {
		return nil, err
	}
	n := len(buf) - at
	if n < 0x80 {
		buf[at-1] = byte(n)
		return buf, nil
	}
	var lenBuf [binary.MaxVarintLen64]byte
	k := binary.PutUvarint(lenBuf[:], uint64(n))
	buf = append(buf, lenBuf[:k-1]...) // room for the longer length
	copy(buf[at-1+k:], buf[at:at+n])
	copy(buf[at-1:], lenBuf[:k])
	return buf, nil
}

// encodedSize estimates the bytes of c's rows in a payload from its first
// visible rows: a million-row COPY grew a too-small guess by doubling,
// copying the payload many times over (a third of the COPY's CPU).
func encodedSize(c *types.Chunk) int {
	const sample = 32
	n, bytes := 0, 0
	var val, lenBuf []byte
	for i := 0; i < c.Capacity() && n < sample; i++ {
		if !c.Visible(i) {
			continue
		}
		var err error
		if val, err = codec.EncodeValueColumns(val[:0], c.Cols, i); err != nil {
			break // EncodeDML reports it
		}
		n++
		lenBuf = binary.AppendUvarint(lenBuf[:0], uint64(len(val)))
		bytes += 1 + len(lenBuf) + len(val) // op, length, value
	}
	if n == 0 {
		return 0
	}
	return bytes*c.Cardinality()/n*9/8 + 64
}

// DecodeDML decodes a payload written by EncodeDML into a chunk with ops
// and no visibility mask. Its column types must equal ts. Malformed input
// is an error wrapping ErrCorruptDML, never a panic.
func DecodeDML(b []byte, ts []types.Type) (*types.Chunk, error) {
	cur, err := openDML(b, ts)
	if err != nil {
		return nil, err
	}
	c, err := cur.window(cur.rows)
	if err != nil || c != nil {
		return c, err
	}
	return types.NewChunk(emptyColumns(ts), nil), nil
}

func emptyColumns(ts []types.Type) []types.Column {
	cols := make([]types.Column, len(ts))
	for j, t := range ts {
		cols[j] = types.MustColumn(t, 0)
	}
	return cols
}

// RowSpans returns where each row's value encoding lies in a payload
// written by EncodeDML: row i is payload[spans[2i]:spans[2i+1]]. It
// returns nil for a payload of 4 GiB or more (the spans are 32-bit).
func RowSpans(payload []byte, ts []types.Type) ([]uint32, error) {
	if len(payload) > math.MaxUint32 {
		return nil, nil
	}
	cur, err := openDML(payload, ts)
	if err != nil {
		return nil, err
	}
	return cur.spans(cur.rows, false)
}

// dmlCursor decodes a payload's rows a window at a time, so that a
// million-row record is never held decoded whole (the table source cuts
// it into chunks as it goes).
type dmlCursor struct {
	r    *dmlReader
	ts   []types.Type
	rows int // rows in the payload
	next int // rows decoded or skipped so far
	dec  *codec.ColumnDecoder
	// run, when set, says the payload is a fresh run (version 2).
	run     *FreshRun
	payload []byte
}

// openDML checks a payload (checksum, header, types) and returns a cursor
// before its first row.
func openDML(b []byte, ts []types.Type) (*dmlCursor, error) {
	return openCheckedDML(b, ts, false)
}

// openCheckedDML is openDML, skipping the checksum when summed says its
// reader found it right (storage.DMLRecord.Checked).
func openCheckedDML(b []byte, ts []types.Type, summed bool) (*dmlCursor, error) {
	r, run, err := checkDMLFrame(b, ts, summed)
	if err != nil {
		return nil, err
	}
	n, err := r.uvarint("row count")
	if err != nil {
		return nil, err
	}
	// Each row takes at least two bytes, so a count beyond that is corrupt
	// (and must not size an allocation).
	if n > uint64(len(r.b))/2 {
		return nil, corrupt("row count %d exceeds payload", n)
	}
	cur := &dmlCursor{r: r, ts: ts, rows: int(n), dec: codec.NewColumnDecoder(min(int(n), types.DefaultChunkSize)), run: run, payload: b}
	if err := cur.checkRun(); err != nil {
		return nil, err
	}
	if n == 0 {
		return cur, cur.checkEnd()
	}
	return cur, nil
}

// skip passes over the next k rows without decoding them.
func (c *dmlCursor) skip(k int) error {
	_, err := c.spans(min(k, c.rows-c.next), false)
	return err
}

// window decodes the next max rows, or one more so as not to end on the
// first half of an update pair, into a chunk; nil when none are left.
func (c *dmlCursor) window(max int) (*types.Chunk, error) {
	if c.next >= c.rows {
		return nil, nil
	}
	n := min(max, c.rows-c.next)
	cols := make([]types.Column, len(c.ts))
	for j, t := range c.ts {
		cols[j] = types.MustColumn(t, n+1)
	}
	ops := make([]types.Op, 0, n+1)
	for len(ops) < n || (ops[len(ops)-1] == types.UpdateDelete && c.next < c.rows) {
		op, err := c.r.row(c.ts, cols, c.dec)
		if err != nil {
			return nil, fmt.Errorf("row %d: %w", c.next, err)
		}
		ops = append(ops, op)
		c.next++
	}
	if err := c.checkEnd(); err != nil {
		return nil, err
	}
	return types.NewChunk(cols, ops), nil
}

// checkEnd reports trailing bytes once every row is read.
func (c *dmlCursor) checkEnd() error {
	if c.next >= c.rows && len(c.r.b) != 0 {
		return corrupt("%d trailing bytes", len(c.r.b))
	}
	return nil
}

// checkDMLFrame verifies the checksum, header and column types, and returns
// a reader positioned at the row count, and a version 2 payload's run.
func checkDMLFrame(b []byte, ts []types.Type, summed bool) (*dmlReader, *FreshRun, error) {
	if len(b) < 2+4 {
		return nil, nil, corrupt("payload of %d bytes is too short", len(b))
	}
	body, sum := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
	if !summed && crc32.Checksum(body, crcTable) != sum {
		return nil, nil, corrupt("checksum mismatch")
	}
	if body[0] != dmlMagic || (body[1] != dmlVersion && body[1] != dmlVersionFresh) {
		return nil, nil, corrupt("bad header %#x %#x", body[0], body[1])
	}
	r := &dmlReader{b: body[2:]}
	nc, err := r.uvarint("column count")
	if err != nil {
		return nil, nil, err
	}
	if nc != uint64(len(ts)) || uint64(len(r.b)) < nc {
		return nil, nil, corrupt("payload has %d columns, want %d", nc, len(ts))
	}
	for i, t := range ts {
		if types.ID(r.b[i]) != t.ID {
			return nil, nil, corrupt("column %d is %s, want %s", i, types.Type{ID: types.ID(r.b[i])}, t)
		}
	}
	r.b = r.b[nc:]
	if body[1] != dmlVersionFresh {
		return r, nil, nil
	}
	run, err := r.freshHeader(ts)
	return r, run, err
}

type dmlReader struct{ b []byte }

func (r *dmlReader) uvarint(what string) (uint64, error) {
	v, k := binary.Uvarint(r.b)
	if k <= 0 {
		return 0, corrupt("bad %s", what)
	}
	r.b = r.b[k:]
	return v, nil
}

// row decodes the next row straight into cols and returns its op.
func (r *dmlReader) row(ts []types.Type, cols []types.Column, dec *codec.ColumnDecoder) (types.Op, error) {
	if len(r.b) == 0 {
		return 0, corrupt("missing op")
	}
	op := types.Op(r.b[0])
	if op > types.UpdateInsert {
		return 0, corrupt("bad op %d", op)
	}
	r.b = r.b[1:]
	n, err := r.uvarint("row length")
	if err != nil {
		return 0, err
	}
	if n > uint64(len(r.b)) {
		return 0, corrupt("row length %d exceeds payload", n)
	}
	if err := dec.DecodeInto(r.b[:n], ts, cols); err != nil {
		return 0, fmt.Errorf("%w: %w", ErrCorruptDML, err)
	}
	r.b = r.b[n:]
	return op, nil
}

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorruptDML, fmt.Sprintf(format, args...))
}
