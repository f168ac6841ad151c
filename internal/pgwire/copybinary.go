package pgwire

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// copyBinarySignature opens COPY's binary format.
var copyBinarySignature = []byte("PGCOPY\n\xff\r\n\x00")

// CopyBinaryDecoder reads rows in COPY's binary format (what pgx's
// CopyFrom sends): a header, then per row a 16-bit field count and per
// field a 32-bit length (-1 for NULL) and the value in its type's binary
// send format, then a trailer of count -1 (or the end of the data). The column types are the COPY's
// target columns, in order.
type CopyBinaryDecoder struct {
	r     *bufio.Reader
	ts    []types.Type
	row   int
	begun bool
	buf   []byte
}

// NewCopyBinaryDecoder reads binary rows of ts from r (the reader CopyIn
// returns).
func NewCopyBinaryDecoder(r io.Reader, ts []types.Type) *CopyBinaryDecoder {
	return &CopyBinaryDecoder{r: bufio.NewReaderSize(r, 64<<10), ts: ts}
}

// Line returns the number of the row last read (1-based), for errors.
func (d *CopyBinaryDecoder) Line() int { return d.row }

func errCopyBinary(format string, args ...any) error {
	return sqlerr.Errorf(sqlerr.Code("22P04"), "invalid COPY binary data: "+format, args...)
}

// ReadRow returns the next row's values, io.EOF after the trailer.
func (d *CopyBinaryDecoder) ReadRow() (types.Row, error) {
	if !d.begun {
		if err := d.readHeader(); err != nil {
			return nil, err
		}
		d.begun = true
	}
	n16, err := d.readUint(2)
	n := int16(n16)
	if err != nil {
		if err == io.EOF {
			// As in Postgres, data that ends at a row boundary needs no
			// trailer (pgx sends none).
			return nil, io.EOF
		}
		return nil, errCopyBinary("%v", err)
	}
	if n == -1 {
		return nil, io.EOF
	}
	d.row++
	if int(n) != len(d.ts) {
		return nil, sqlerr.Errorf(sqlerr.Code("22P04"), "row field count is %d, expected %d", n, len(d.ts))
	}
	row := make(types.Row, n)
	for i, t := range d.ts {
		v, err := d.readField(t)
		if err != nil {
			return nil, err
		}
		row[i] = v
	}
	return row, nil
}

func (d *CopyBinaryDecoder) readHeader() error {
	sig := make([]byte, len(copyBinarySignature))
	if _, err := io.ReadFull(d.r, sig); err != nil || !bytes.Equal(sig, copyBinarySignature) {
		return errCopyBinary("COPY file signature not recognized")
	}
	var flags, ext uint32
	if err := binary.Read(d.r, binary.BigEndian, &flags); err != nil {
		return errCopyBinary("invalid header: %v", err)
	}
	if flags&(1<<16) != 0 {
		return errCopyBinary("OIDs are not supported")
	}
	if err := binary.Read(d.r, binary.BigEndian, &ext); err != nil {
		return errCopyBinary("invalid header: %v", err)
	}
	if _, err := d.r.Discard(int(ext)); err != nil {
		return errCopyBinary("invalid header extension: %v", err)
	}
	return nil
}

// readUint reads a big-endian unsigned integer of size bytes (2 or 4)
// without encoding/binary.Read's reflection and allocation. A clean end
// before its first byte is io.EOF.
func (d *CopyBinaryDecoder) readUint(size int) (uint32, error) {
	b, err := d.r.Peek(size)
	if err != nil {
		if len(b) == 0 && err == io.EOF {
			return 0, io.EOF
		}
		return 0, io.ErrUnexpectedEOF
	}
	var v uint32
	if size == 2 {
		v = uint32(binary.BigEndian.Uint16(b))
	} else {
		v = binary.BigEndian.Uint32(b)
	}
	_, _ = d.r.Discard(size)
	return v, nil
}

func (d *CopyBinaryDecoder) readField(t types.Type) (types.Datum, error) {
	n32, err := d.readUint(4)
	if err != nil {
		return nil, errCopyBinary("unexpected end of data")
	}
	n := int32(n32)
	if n == -1 {
		return nil, nil
	}
	if n < 0 || n > 1<<30 {
		return nil, errCopyBinary("field length %d", n)
	}
	if cap(d.buf) < int(n) {
		d.buf = make([]byte, n)
	}
	b := d.buf[:n]
	if _, err := io.ReadFull(d.r, b); err != nil {
		return nil, errCopyBinary("unexpected end of data")
	}
	v, err := decodeBinary(b, t)
	if err != nil {
		return nil, fmt.Errorf("column of type %s: %w", t, err)
	}
	return v, nil
}
