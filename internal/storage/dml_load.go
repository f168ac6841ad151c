package storage

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/sluice-db/sluice/internal/types/codec"
)

// A bulk statement that built its rows' file (BulkLoad) names it in its
// table's log with a load record: no rows of its own, written first in the
// statement's batch, before the Covers records that hold the same rows as
// segments. A reader that can take the file (a table source whose table
// has nothing downstream) skips the covered records; any other reader
// skips the load record and reads the covered ones. The file is the
// record's segment: the batch takes it over (DMLWrite.Segment), truncation
// and DROP TABLE remove it, and the sweep at a restart keeps it while the
// record is there. docs/design/write-once-bulk.md.

// LoadRecord is a load record: its file and how many records after it
// hold the same rows.
type LoadRecord struct {
	File   LoadedFile
	Covers int
}

// dmlLoadSuffix ends the key of a load record: d|table|seq|l.
const dmlLoadSuffix = 'l'

func dmlLoadKey(tableID uint32, seq uint64) []byte {
	return append(dmlKey(tableID, seq), dmlLoadSuffix)
}

func isDMLLoadKey(key []byte) bool {
	return len(key) == 1+4+8+1 && key[len(key)-1] == dmlLoadSuffix
}

// loadRecordVersion is the first byte of an encoded load record.
const loadRecordVersion = 1

// encodeLoadRecord encodes r, its file named name (in the segment directory).
func encodeLoadRecord(r *LoadRecord, name string) []byte {
	b := []byte{loadRecordVersion}
	b = appendBytes(b, []byte(name))
	b = binary.AppendUvarint(b, uint64(r.Covers))
	b = binary.AppendUvarint(b, uint64(r.File.Rows))
	b = binary.AppendVarint(b, r.File.LoID)
	b = binary.AppendVarint(b, r.File.HiID)
	b = appendBytes(b, r.File.LoKey)
	b = appendBytes(b, r.File.HiKey)
	for _, c := range r.File.Counts {
		b = binary.AppendUvarint(b, uint64(c))
	}
	return b
}

func appendBytes(b, v []byte) []byte {
	return append(binary.AppendUvarint(b, uint64(len(v))), v...)
}

// errCorruptLoad is a load record that does not decode.
var errCorruptLoad = errors.New("corrupt load record")

// decodeLoadRecord decodes a load record; name is its file's name.
func decodeLoadRecord(v []byte) (r *LoadRecord, name string, err error) {
	d := loadDecoder{b: v}
	if len(v) == 0 || v[0] != loadRecordVersion {
		return nil, "", fmt.Errorf("storage: %w: version", errCorruptLoad)
	}
	d.b = d.b[1:]
	name = string(d.bytes())
	r = &LoadRecord{Covers: int(d.uvarint())}
	r.File.Rows = int64(d.uvarint())
	r.File.LoID, r.File.HiID = d.varint(), d.varint()
	r.File.LoKey, r.File.HiKey = d.bytes(), d.bytes()
	r.File.Counts = make([]int64, codec.VNodeCount)
	for v := range r.File.Counts {
		r.File.Counts[v] = int64(d.uvarint())
	}
	if d.bad || len(d.b) != 0 || name == "" {
		return nil, "", fmt.Errorf("storage: %w", errCorruptLoad)
	}
	return r, name, nil
}

// loadDecoder reads a load record's fields; bad is set by the first that
// does not decode (the later ones then read zeros).
type loadDecoder struct {
	b   []byte
	bad bool
}

func (d *loadDecoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	return d.took(v, n)
}

func (d *loadDecoder) varint() int64 {
	v, n := binary.Varint(d.b)
	return int64(d.took(uint64(v), n))
}

// took consumes n bytes holding v, or marks the record bad (n ≤ 0: the
// varint did not decode) and returns 0.
func (d *loadDecoder) took(v uint64, n int) uint64 {
	if n <= 0 {
		d.bad, d.b = true, nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *loadDecoder) bytes() []byte {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.bad, d.b = true, nil
		return nil
	}
	v := append([]byte(nil), d.b[:n]...)
	d.b = d.b[n:]
	return v
}

// checkLoadWrites refuses a batch with a load record that has rows of its
// own, a count per vnode missing, or not exactly Covers records of its
// table after it in the batch, none a load record: a reader skipping them
// would lose or repeat rows, and a record that does not decode would make
// the table's log unopenable.
func checkLoadWrites(ws []TableDMLWrite) error {
	for i, w := range ws {
		if w.Load == nil {
			continue
		}
		if w.Payload != nil || w.Tail != nil || w.Segment == "" || len(w.Load.File.Counts) != codec.VNodeCount {
			return fmt.Errorf("storage: table %d: a load record with rows of its own or without its counts", w.Table)
		}
		n := 0
		for _, x := range ws[i+1:] {
			if x.Table != w.Table || n == w.Load.Covers {
				continue
			}
			if x.Load != nil {
				return fmt.Errorf("storage: table %d: a load record covers another", w.Table)
			}
			n++
		}
		if w.Load.Covers < 1 || n != w.Load.Covers {
			return fmt.Errorf("storage: table %d: a load record covers %d records, %d follow it", w.Table, w.Load.Covers, n)
		}
	}
	return nil
}

// LoadWrite returns the DMLWrite of a load record of table naming f (in
// the segment directory, NewLoadPath) and covering the next covers
// records of the batch. The batch takes the file over, as a segment.
func (s *Store) LoadWrite(f *LoadedFile, covers int) DMLWrite {
	return DMLWrite{Load: &LoadRecord{File: *f, Covers: covers}, Segment: s.fs.PathBase(f.Path)}
}

// decodeLoad decodes a load record's value, its file's path resolved.
func (s *Store) decodeLoad(v []byte) (*LoadRecord, error) {
	r, name, err := decodeLoadRecord(v)
	if err != nil {
		return nil, err
	}
	r.File.Path = s.fs.PathJoin(s.segmentDir, name)
	return r, nil
}
